"""The everyday query class: what users type into a documentation site's search box.

Two to five words, as typed: a name ("pg_dump", "CREATE INDEX") or, mostly, a short
description of a task ("undo last commit", "read file line by line"). Each query was
written from what the site's users want to do, by reading the site's table of contents,
FAQ and "How do I" pages, before any search was run, and is judged by the pages that
answer it (explain how, or document the command, function or setting that does it);
several pages can be right. Paths are relative to the site root, as in judgments.py. The
class is ``everyday`` and, like ``natural`` (natural.py: a sentence or a question), is
never sampled: every query runs.
"""

from __future__ import annotations

#: Hand-judged everyday queries: the query and the pages that answer it.
POSTGRES_EVERYDAY = {
    "create index concurrently": ("sql-createindex.html",),
    "CREATE INDEX": ("sql-createindex.html",),
    "vacuum full": ("sql-vacuum.html",),
    "explain analyze": ("sql-explain.html", "using-explain.html"),
    "window functions": ("tutorial-window.html", "functions-window.html"),
    "row level security": ("ddl-rowsecurity.html",),
    "foreign key": ("ddl-constraints.html", "tutorial-fk.html"),
    "json operators": ("functions-json.html",),
    "pg_dump": ("app-pgdump.html",),
    "streaming replication": ("warm-standby.html",),
    "connection string": ("libpq-connect.html",),
    "upsert on conflict": ("sql-insert.html",),
    "table partitioning": ("ddl-partitioning.html",),
    "full text search": ("textsearch.html", "textsearch-intro.html"),
    "autovacuum": ("routine-vacuuming.html", "runtime-config-autovacuum.html"),
    "common table expressions": ("queries-with.html",),
    "date formatting": ("functions-formatting.html",),
    "uuid type": ("datatype-uuid.html",),
    "listen notify": ("sql-listen.html", "sql-notify.html"),
    "alter table add column": ("sql-altertable.html",),
}
SQLITE_EVERYDAY = {
    "create index": ("lang_createindex.html",),
    "foreign keys": ("foreignkeys.html",),
    "full text search": ("fts5.html", "fts3.html"),
    "json functions": ("json1.html",),
    "write ahead log": ("wal.html",),
    "vacuum": ("lang_vacuum.html",),
    "upsert": ("lang_upsert.html",),
    "window functions": ("windowfunctions.html",),
    "datatypes": ("datatype3.html",),
    "date and time functions": ("lang_datefunc.html",),
    "autoincrement": ("autoinc.html",),
    "pragma journal_mode": ("pragma.html",),
    "query planner": ("queryplanner.html", "optoverview.html"),
    "sqlite3_prepare_v2": ("c3ref/prepare.html",),
    "busy timeout": ("c3ref/busy_timeout.html",),
    "attach database": ("lang_attach.html",),
    "strict tables": ("stricttables.html",),
    "generated columns": ("gencol.html",),
    "savepoint": ("lang_savepoint.html",),
    "explain query plan": ("eqp.html",),
}

SCIPY_EVERYDAY = {
    "fourier transform": ("reference/generated/scipy.fft.fft.html", "tutorial/fft.html", "reference/fft.html"),
    "linear regression": ("reference/generated/scipy.stats.linregress.html",
                          "reference/generated/scipy.linalg.lstsq.html"),
    "cubic spline": ("reference/generated/scipy.interpolate.CubicSpline.html", "tutorial/interpolate.html"),
    "chi square test": ("reference/generated/scipy.stats.chisquare.html",
                        "reference/generated/scipy.stats.chi2_contingency.html"),
    "kmeans clustering": ("reference/generated/scipy.cluster.vq.kmeans.html",
                          "reference/generated/scipy.cluster.vq.kmeans2.html", "reference/cluster.vq.html"),
    "matrix exponential": ("reference/generated/scipy.linalg.expm.html",),
    "peak detection": ("reference/generated/scipy.signal.find_peaks.html",
                       "reference/generated/scipy.signal.find_peaks_cwt.html"),
    "rotation from euler angles": ("reference/generated/scipy.spatial.transform.Rotation.html",
                                   "reference/generated/scipy.spatial.transform.Rotation.from_euler.html"),
    "normal distribution pdf": ("reference/generated/scipy.stats.norm.html",),
    "sparse matrix formats": ("tutorial/sparse.html", "reference/sparse.html"),
    "rotate an image": ("reference/generated/scipy.ndimage.rotate.html",),
    "lu decomposition": ("reference/generated/scipy.linalg.lu.html", "reference/generated/scipy.linalg.lu_factor.html"),
    "delaunay triangulation": ("reference/generated/scipy.spatial.Delaunay.html", "tutorial/spatial.html"),
    "median filter": ("reference/generated/scipy.signal.medfilt.html",
                      "reference/generated/scipy.ndimage.median_filter.html"),
    "read netcdf file": ("reference/generated/scipy.io.netcdf_file.html", "tutorial/io.html"),
    "binomial coefficient": ("reference/generated/scipy.special.comb.html",
                             "reference/generated/scipy.special.binom.html"),
}
SQLALCHEMY_EVERYDAY = {
    "many to many relationship": ("orm/basic_relationships.html",),
    "eager load relationships": ("orm/loading_relationships.html",),
    "create all tables": ("core/metadata.html", "tutorial/metadata.html", "orm/quickstart.html"),
    "connection pool size": ("core/pooling.html", "core/engines.html"),
    "run raw sql": ("core/connections.html", "tutorial/dbapi_transactions.html", "faq/sessions.html"),
    "order by descending": ("tutorial/data_select.html", "core/sqlelement.html"),
    "count rows": ("core/functions.html", "orm/query.html", "tutorial/data_select.html"),
    "json column type": ("core/type_basics.html", "dialects/postgresql.html"),
    "table without primary key": ("faq/ormconfiguration.html",),
    "unique constraint": ("core/constraints.html",),
    "sqlite foreign keys": ("dialects/sqlite.html",),
    "group by having": ("tutorial/data_select.html", "core/selectable.html"),
    "upgrade to 2.0": ("changelog/migration_20.html",),
    "mysql server has gone away": ("faq/connections.html", "core/pooling.html"),
    "raw dbapi connection": ("faq/connections.html", "core/connections.html"),
    "case insensitive match": ("core/sqlelement.html",),
}
SPHINX_EVERYDAY = {
    "number the sections": ("faq.html", "usage/restructuredtext/directives.html"),
    "add a logo": ("usage/configuration.html",),
    "check for broken links": ("usage/builders/index.html", "usage/configuration.html"),
    "table of contents tree": ("usage/restructuredtext/directives.html",),
    "code block highlighting": ("usage/restructuredtext/directives.html", "usage/configuration.html"),
    "cross reference a function": ("usage/restructuredtext/roles.html", "usage/restructuredtext/domains.html"),
    "footnotes and citations": ("usage/restructuredtext/basics.html",),
    "insert an image": ("usage/restructuredtext/basics.html",),
    "custom css file": ("usage/configuration.html", "extdev/appapi.html"),
    "epub output": ("usage/builders/index.html", "usage/configuration.html", "faq.html"),
    "man page output": ("usage/builders/index.html", "usage/configuration.html"),
    "install sphinx": ("usage/installation.html",),
    "treat warnings as errors": ("man/sphinx-build.html",),
    "parallel build": ("man/sphinx-build.html",),
    "numpy style docstrings": ("usage/extensions/napoleon.html", "usage/extensions/example_numpy.html"),
    "global text substitutions": ("faq.html", "usage/restructuredtext/basics.html", "usage/configuration.html"),
}
REQUESTS_EVERYDAY = {
    "post json data": ("user/quickstart.html", "api.html"),
    "set a timeout": ("user/quickstart.html", "user/advanced.html"),
    "custom user agent": ("community/faq.html", "user/quickstart.html"),
    "upload a file": ("user/quickstart.html", "user/advanced.html"),
    "basic auth": ("user/authentication.html",),
    "oauth": ("user/authentication.html",),
    "socks proxy": ("user/advanced.html",),
    "client side certificate": ("user/advanced.html",),
    "stream a large download": ("user/advanced.html", "user/quickstart.html"),
    "response status code": ("user/quickstart.html", "api.html"),
    "follow redirects": ("user/quickstart.html", "api.html"),
    "reuse connections with a session": ("user/advanced.html", "api.html"),
    "event hooks": ("user/advanced.html",),
    "put request": ("user/quickstart.html", "user/advanced.html", "api.html"),
    "response encoding": ("user/quickstart.html", "user/advanced.html", "community/faq.html"),
    "ca bundle path": ("user/advanced.html",),
}
EVERYDAY = {
    "postgresql": POSTGRES_EVERYDAY,
    "sqlite": SQLITE_EVERYDAY,
    "scipy": SCIPY_EVERYDAY,
    "sqlalchemy": SQLALCHEMY_EVERYDAY,
    "sphinx": SPHINX_EVERYDAY,
    "requests": REQUESTS_EVERYDAY,
}
