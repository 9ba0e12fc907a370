"""The warm worker (`grader warm`): one process that keeps PyTorch and CUDA loaded and grades what `grader test` and
`grader submit` hand it over a Unix socket. worker.py serves, client.py is the commands' side, wire.py what both
share (the socket, the messages, the identity that must match)."""
