"""Work off the crawl's event loop: the worker process it talks to over a socket, and the
page readers that decode and read the fetched pages."""
