"""The static site: `render.render_site` writes index, problem and submission pages from the database."""
