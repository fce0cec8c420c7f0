"""Links: resolution, location signature flags, locality, destination types, text."""

from __future__ import annotations

from textpile.enums import LinkDestinationType as Dest
from textpile.enums import LinkLocality
from textpile.store.urls import parse_url
from textpile.summarize.scrape.document import scrape_document
from textpile.summarize.scrape.links import link_locality

PAGE = "https://site.example/docs/page.html"


def links_of(html: str, url: str = PAGE):
    return scrape_document(html, url, now_unix_utc=1_800_000_000).links


def by_text(html: str, url: str = PAGE):
    return {link.text: link for link in links_of(html, url)}


def test_link_locality_rules():
    page = parse_url("https://site.example/a/b?q=1")
    assert link_locality(page, parse_url("https://site.example/a/b?q=1#frag")) == LinkLocality.self_link
    assert link_locality(page, parse_url("https://site.example/a/b?q=2")) == LinkLocality.in_link
    assert link_locality(page, parse_url("https://site.example/other")) == LinkLocality.in_link
    assert link_locality(page, parse_url("http://site.example/other")) == LinkLocality.in_link
    assert link_locality(parse_url("ws://site.example/"), parse_url("wss://site.example/x")) == LinkLocality.in_link
    assert link_locality(page, parse_url("https://site.example:8443/other")) == LinkLocality.out_link
    assert link_locality(page, parse_url("https://sub.site.example/")) == LinkLocality.out_link
    assert link_locality(page, parse_url("ftp://site.example/")) == LinkLocality.out_link
    assert link_locality(page, parse_url("mailto:me@site.example")) == LinkLocality.out_link
    local = parse_url("http://127.0.0.1:8080/a")
    assert link_locality(local, parse_url("http://127.0.0.1:8080/b")) == LinkLocality.in_link
    assert link_locality(local, parse_url("http://127.0.0.1:8081/b")) == LinkLocality.out_link


def test_links_resolved_with_fragment_split_and_base_href():
    html = """<html><head><base href="/root/"></head><body>
    <a href="#top">Top</a><a href="sub/x.html#sec">Rel</a><a href="//cdn.example/y">Proto</a>
    <a href="javascript:void(0)">JS</a><a href="http://[::1">Broken</a><a href="">Empty</a></body></html>"""
    links = by_text(html)
    assert set(links) == {"Top", "Rel", "Proto"}
    assert (links["Top"].to_url, links["Top"].fragment) == ("https://site.example/root/", "top")
    assert links["Top"].link_locality == LinkLocality.in_link  # the base moved it off the page
    assert (links["Rel"].to_url, links["Rel"].fragment) == ("https://site.example/root/sub/x.html", "sec")
    assert (links["Proto"].to_url, links["Proto"].fragment) == ("https://cdn.example/y", None)
    assert links["Proto"].link_locality == LinkLocality.out_link


def test_selflink_without_base():
    links = by_text('<p><a href="#x">Here</a> <a href="page.html">Same</a></p>')
    assert links["Here"].link_locality == LinkLocality.self_link
    assert links["Here"].to_url == PAGE and links["Here"].fragment == "x"
    assert links["Same"].link_locality == LinkLocality.self_link and links["Same"].fragment is None


def test_links_sharing_a_reference_keep_their_own_fragments_as_the_url_parser_gives_them():
    # links that differ only by fragment are resolved once; fragments the WHATWG parser
    # percent-encodes (space, non-ASCII, "<", a backtick) or that end in a control come out encoded
    html = """<p><a href="os.html#os.getcwd">A</a><a href="os.html#os.chdir">B</a><a href="os.html">C</a>
    <a href="os.html#">D</a><a href="os.html#a b">E</a><a href="os.html#caf\u00e9">F</a>
    <a href="os.html#x<y`z">G</a><a href="os.html#p#q">H</a><a href="mailto:me@site.example#x">I</a>
    <a href="os.html\x01">J</a><a href="os.html\x01#k">K</a><a href=" os.html#l ">L</a></p>"""
    links = by_text(html)
    os_html = "https://site.example/docs/os.html"
    assert [(links[t].to_url, links[t].fragment) for t in "ABCDEFGHLIJK"] == [
        (os_html, "os.getcwd"), (os_html, "os.chdir"), (os_html, None), (os_html, ""), (os_html, "a%20b"),
        (os_html, "caf%C3%A9"), (os_html, "x%3Cy%60z"), (os_html, "p#q"), (os_html, "l"),
        ("mailto:me@site.example", "x"), (os_html, None), ("https://site.example/docs/os.html%01", "k"),
    ]
    assert {links[t].link_locality for t in "ABCDEFGHL"} == {LinkLocality.in_link}
    assert links["I"].destination_type == Dest.communication


def test_location_signature_flags():
    html = """<html><body>
    <header><nav><ul><li><a href="/1">nav-list</a></li></ul></nav></header>
    <main><article><section><h2><a href="/2">headline</a></h2>
      <p><a href="/3">para</a></p>
      <table><tr><td><a href="/4">cell</a></td></tr></table>
      <figure><a href="/5">fig</a></figure>
      <form><a href="/6">form</a></form>
      <code><a href="/7">code</a></code>
      <dl><dt><a href="/8">dl</a></dt></dl><ol><li><a href="/9">ol</a></li></ol>
    </section></article></main>
    <aside><a href="/10">aside</a></aside>
    <footer><address><a href="/11">address</a></address></footer>
    <div><a href="/12">plain</a></div>
    </body></html>"""
    links = by_text(html)
    assert links["nav-list"].location == {"in_header", "in_nav", "in_list"}
    common = {"in_main", "in_article", "in_section"}
    assert links["headline"].location == common | {"in_headline"}
    assert links["para"].location == common | {"in_paragraph"}
    assert links["cell"].location == common | {"in_table"}
    assert links["fig"].location == common | {"in_figure"}
    assert links["form"].location == common | {"in_form"}
    assert links["code"].location == common | {"in_code"}
    assert links["dl"].location == common | {"in_list"}
    assert links["ol"].location == common | {"in_list"}
    assert links["aside"].location == {"in_aside"}
    assert links["address"].location == {"in_footer", "in_address"}
    assert links["plain"].location == frozenset()


def test_rel_flags_contains_headline_and_text():
    html = """<body><a href="/a" rel="NoFollow me">A</a><a href="/t" rel="tag">T</a>
    <a href="/h"><h2>  Head
      line </h2></a><a href="/i"><img src="/i.png" alt="Picture alt"></a>
    <a href="/l" title="Titled"></a><a href="/e"></a></body>"""
    links = links_of(html)
    a = {link.to_url.rsplit("/", 1)[1]: link for link in links if link.html_tag_name == "a"}
    assert (a["a"].rel_nofollow, a["a"].rel_me, a["a"].rel_tag) == (True, True, False)
    assert (a["t"].rel_nofollow, a["t"].rel_me, a["t"].rel_tag) == (False, False, True)
    assert a["h"].contains_headline is True and a["h"].text == "Head line"
    assert a["a"].contains_headline is False
    assert a["i"].text == "Picture alt"
    assert a["l"].text == "Titled"
    assert a["e"].text is None
    img = [link for link in links if link.html_tag_name == "img"][0]
    assert (img.to_url, img.destination_type, img.text) == ("https://site.example/i.png", Dest.media_image, "Picture alt")


def test_destination_types():
    html = """<html><head>
    <link rel="stylesheet" href="/s.css"><link rel="alternate" type="application/rss+xml" href="/feed">
    <link rel="icon" href="/favicon.ico"><link rel="canonical" href="/docs/page.html">
    <script src="/app.js"></script></head><body>
    <a href="/doc">doc</a><a href="/pic.JPG">jpg</a><a href="/song.mp3">mp3</a><a href="/film.webm">webm</a>
    <a href="/atom.xml" type="application/atom+xml">atom</a><a href="/x.tar.gz">archive</a>
    <a href="mailto:me@site.example">mail</a><a href="tel:+1234">phone</a>
    <audio src="/a.ogg"></audio><video><source src="/v.mp4"></video></body></html>"""
    links = links_of(html)
    got = {(link.html_tag_name, link.to_url.rsplit("/", 1)[-1] if "/" in link.to_url else link.to_url):
           link.destination_type for link in links}
    assert got == {
        ("link", "s.css"): Dest.stylesheet, ("link", "feed"): Dest.feed, ("link", "favicon.ico"): Dest.media_image,
        ("link", "page.html"): Dest.document, ("script", "app.js"): Dest.script,
        ("a", "doc"): Dest.document, ("a", "pic.JPG"): Dest.media_image, ("a", "song.mp3"): Dest.media_audio,
        ("a", "film.webm"): Dest.media_video, ("a", "atom.xml"): Dest.feed, ("a", "x.tar.gz"): Dest.file,
        ("a", "mailto:me@site.example"): Dest.communication, ("a", "tel:+1234"): Dest.communication,
        ("audio", "a.ogg"): Dest.media_audio, ("source", "v.mp4"): Dest.media_video,
    }
    canonical = [link for link in links if link.to_url == PAGE][0]
    assert canonical.link_locality == LinkLocality.self_link and canonical.location == frozenset()
