"""Getting one answer politely and safely: the HTTP request with its caps and deadline,
the SSRF filter, one connection pool per origin, the crawl delay, robots.txt rules and
what a robots.txt answer means, content sniffing."""
