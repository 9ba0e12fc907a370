"""The web judge: `grader serve`'s pages and HTTP API over the same queue and database as the command line."""
