"""Reading one answer: its charset, an HTML page's links and directives, the headers the
crawler reads, meta refresh, and the packed form of a page's links."""
