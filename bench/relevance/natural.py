"""The natural-language query class: questions and paraphrases in a user's own words.

Each query describes what the user wants to do or know, mostly without the words of
the page that answers it ("make lookups on a column faster" for CREATE INDEX). They
were written for this benchmark, before any search was run, from the site's table of
contents, FAQ and "How do I" pages, and judged by reading the pages of each site: a page is
relevant when it answers the question (explains how, or documents the command, function
or setting that does it); several pages can be right. Paths are relative to the site
root, as in judgments.py. The class is ``natural`` and, like ``everyday``, is never
sampled: every query runs.
"""

from __future__ import annotations

from everyday import under

POSTGRES = {
    "make a column that numbers new rows automatically": (
        "datatype-numeric.html", "sql-createsequence.html", "sql-createtable.html", "functions-sequence.html"),
    "find out why my query is slow": ("using-explain.html", "sql-explain.html", "performance-tips.html"),
    "undo all changes when one statement in a group fails": (
        "tutorial-transactions.html", "sql-rollback.html", "sql-begin.html"),
    "load rows from a comma separated file into a table": ("sql-copy.html", "app-psql.html", "populate.html"),
    "save the whole database to a file I can restore later": (
        "backup-dump.html", "app-pgdump.html", "backup.html", "app-pgrestore.html"),
    "stop two sessions from changing the same row at the same time": (
        "explicit-locking.html", "sql-select.html", "transaction-iso.html", "sql-lock.html"),
    "see which clients are connected and what they are running": ("monitoring-stats.html",),
    "give back disk space taken by deleted rows": ("routine-vacuuming.html", "sql-vacuum.html"),
    "compare text without caring about upper and lower case": ("functions-matching.html", "citext.html"),
    "keep several values of the same kind in one column": ("arrays.html",),
    "allow logins only from certain client machines": ("auth-pg-hba-conf.html", "client-authentication.html"),
    "rank documents by how well they match the words someone typed": (
        "textsearch-controls.html", "textsearch-intro.html", "textsearch.html"),
    "show only the first ten rows and skip the rest": ("queries-limit.html", "sql-select.html"),
    "run my own function every time a row is inserted": (
        "sql-createtrigger.html", "trigger-definition.html", "plpgsql-trigger.html", "triggers.html"),
    "split a very large table into smaller pieces by date range": ("ddl-partitioning.html",),
    "let a user read a table but not change it": ("sql-grant.html", "ddl-priv.html"),
    "what time is it now on the server": ("functions-datetime.html",),
    "keep a second server up to date so it can take over if the first one dies": (
        "warm-standby.html", "high-availability.html"),
    "change the data type of a column that already exists": ("sql-altertable.html",),
    "combine rows of two tables that share a key": (
        "tutorial-join.html", "queries-table-expressions.html", "sql-select.html"),
    "number of rows in each group": ("tutorial-agg.html", "functions-aggregate.html", "queries-table-expressions.html"),
    "how much memory should the server use for caching data": ("runtime-config-resource.html",),
    "store arbitrary key value pairs in a single column": ("hstore.html", "datatype-json.html"),
    "generate a random unique identifier for each row": ("functions-uuid.html", "uuid-ossp.html", "datatype-uuid.html"),
    "write statements that take longer than a second to the server log": (
        "runtime-config-logging.html", "auto-explain.html"),
    "go back to how the database was an hour ago after a mistake": ("continuous-archiving.html",),
    "move my data to a newer major release": ("upgrading.html", "pgupgrade.html"),
    "a query inside another query": ("functions-subquery.html", "queries-table-expressions.html", "sql-select.html",
                                     "sql-expressions.html"),
}

SQLITE = {
    "give every new row a unique number that keeps increasing": ("autoinc.html", "lang_createtable.html"),
    "readers should not wait while someone is writing": ("wal.html", "isolation.html"),
    "copy a database to another file while it is in use": ("backup.html", "lang_vacuum.html"),
    "make the file smaller after deleting lots of data": ("lang_vacuum.html", "pragma.html"),
    "insert a row or change it when it is already there": (
        "lang_upsert.html", "lang_replace.html", "lang_conflict.html", "lang_insert.html"),
    "get the id of the row I just added": ("c3ref/last_insert_rowid.html", "lang_corefunc.html", "lang_returning.html",
                                           "capi3ref.html"),
    "keep the whole database in RAM instead of on disk": ("inmemorydb.html",),
    "make sure a value points at an existing row of another table": ("foreignkeys.html",),
    "search the text of many documents for words": ("fts5.html", "fts3.html"),
    "add another field to a table I already have": ("lang_altertable.html",),
    "why is my select slow and which index does it use": (
        "eqp.html", "queryplanner.html", "optoverview.html", "lang_explain.html"),
    "keep a date and time in a column": ("lang_datefunc.html", "datatype3.html"),
    "what happens to my data if the power fails in the middle of a write": (
        "atomiccommit.html", "howtocorrupt.html", "transactional.html"),
    "a column whose value is calculated from the other columns": ("gencol.html",),
    "index only the rows that match a condition": ("partialindex.html",),
    "index the result of a function applied to a column": ("expridx.html",),
    "walk a tree of parent and child rows in one query": ("lang_with.html",),
    "import a spreadsheet export into a table": ("cli.html", "csv.html"),
    "largest possible database file and longest string": ("limits.html",),
    "write my own SQL function in C": ("appfunc.html", "c3ref/create_function.html"),
    "roll back part of a transaction but keep the rest": ("lang_savepoint.html",),
    "get my data back from a damaged database file": ("recovery.html", "cli.html"),
    "check the file for corruption": ("pragma.html",),
    "run a statement automatically whenever a row is deleted": ("lang_createtrigger.html",),
    "see the changed rows right away from an update statement": ("lang_returning.html",),
    "gather statistics so the planner chooses better indexes": ("lang_analyze.html", "pragma.html"),
    "why does a column declared integer accept text": ("datatype3.html", "flextypegood.html", "quirks.html"),
    "read values out of a JSON document stored in a column": ("json1.html",),
    "running total over ordered rows": ("windowfunctions.html",),
}

SCIPY = {
    "find the lowest value of a function of several variables": (
        "tutorial/optimize.html", "reference/generated/scipy.optimize.minimize.html", "reference/optimize.html"),
    "fit a model function to measured data points": (
        "reference/generated/scipy.optimize.curve_fit.html", "tutorial/optimize.html",
        "reference/generated/scipy.optimize.least_squares.html"),
    "solve Ax = b for x": ("reference/generated/scipy.linalg.solve.html", "tutorial/linalg.html"),
    "area under a curve between two limits": (
        "reference/generated/scipy.integrate.quad.html", "tutorial/integrate.html", "reference/integrate.html"),
    "simulate an ordinary differential equation over time": (
        "reference/generated/scipy.integrate.solve_ivp.html", "reference/generated/scipy.integrate.odeint.html",
        "tutorial/integrate.html"),
    "estimate values between known samples": ("tutorial/interpolate.html", "reference/interpolate.html",
                                              "reference/generated/scipy.interpolate.interp1d.html"),
    "frequency content of a signal": ("tutorial/fft.html", "reference/generated/scipy.fft.fft.html",
                                      "reference/fft.html", "reference/generated/scipy.signal.periodogram.html",
                                      "reference/generated/scipy.signal.welch.html"),
    "design a filter that removes high frequencies": (
        "reference/generated/scipy.signal.butter.html", "tutorial/signal.html",
        "reference/generated/scipy.signal.firwin.html"),
    "test whether two groups have different means": (
        "reference/generated/scipy.stats.ttest_ind.html", "tutorial/stats.html"),
    "distances between all pairs of points": (
        "reference/generated/scipy.spatial.distance.pdist.html", "reference/generated/scipy.spatial.distance.cdist.html",
        "reference/spatial.distance.html"),
    "find the closest points to a query point quickly": (
        "reference/generated/scipy.spatial.KDTree.html", "reference/generated/scipy.spatial.cKDTree.html",
        "reference/generated/scipy.spatial.KDTree.query.html", "reference/generated/scipy.spatial.cKDTree.query.html"),
    "store a matrix that is mostly zeros": ("tutorial/sparse.html", "reference/sparse.html",
                                            "reference/generated/scipy.sparse.csr_matrix.html"),
    "eigenvalues of a square matrix": ("reference/generated/scipy.linalg.eig.html",
                                       "reference/generated/scipy.linalg.eigh.html",
                                       "reference/generated/scipy.linalg.eigvals.html", "tutorial/linalg.html"),
    "where does a nonlinear function cross zero": (
        "reference/generated/scipy.optimize.root.html", "reference/generated/scipy.optimize.fsolve.html",
        "reference/generated/scipy.optimize.brentq.html", "reference/generated/scipy.optimize.root_scalar.html",
        "tutorial/optimize.html"),
    "open a MATLAB .mat file": ("reference/generated/scipy.io.loadmat.html", "tutorial/io.html"),
    "read a wav sound file": ("reference/generated/scipy.io.wavfile.read.html", "tutorial/io.html"),
    "build a tree of clusters and draw it": (
        "reference/generated/scipy.cluster.hierarchy.linkage.html",
        "reference/generated/scipy.cluster.hierarchy.dendrogram.html", "reference/cluster.hierarchy.html"),
    "blur an image": ("reference/generated/scipy.ndimage.gaussian_filter.html", "tutorial/ndimage.html",
                      "reference/generated/scipy.ndimage.uniform_filter.html"),
    "draw random samples from a bell curve": ("reference/generated/scipy.stats.norm.html", "tutorial/stats.html"),
    "how strongly are two variables linearly related": (
        "reference/generated/scipy.stats.pearsonr.html", "reference/generated/scipy.stats.linregress.html"),
    "shortest route between nodes of a graph": (
        "reference/generated/scipy.sparse.csgraph.shortest_path.html",
        "reference/generated/scipy.sparse.csgraph.dijkstra.html", "tutorial/csgraph.html",
        "reference/sparse.csgraph.html"),
    "maximize a linear objective subject to linear constraints": (
        "reference/generated/scipy.optimize.linprog.html", "tutorial/optimize.html"),
    "smooth noisy measurements": ("reference/generated/scipy.signal.savgol_filter.html",
                                  "reference/generated/scipy.ndimage.gaussian_filter1d.html",
                                  "reference/generated/scipy.interpolate.UnivariateSpline.html"),
    "invert a matrix": ("reference/generated/scipy.linalg.inv.html", "tutorial/linalg.html"),
    "smallest convex shape around a set of points": ("reference/generated/scipy.spatial.ConvexHull.html",
                                                      "tutorial/spatial.html"),
    "value of the speed of light and other physical constants": ("reference/constants.html",),
    "combine two signals by sliding one over the other": (
        "reference/generated/scipy.signal.convolve.html", "reference/generated/scipy.signal.fftconvolve.html",
        "reference/generated/scipy.signal.correlate.html"),
}

SQLALCHEMY = {
    "connect to a database server with a URL": ("core/engines.html", "tutorial/engine.html"),
    "describe a table as a python class": (
        "orm/declarative_tables.html", "orm/mapping_styles.html", "orm/quickstart.html", "tutorial/metadata.html",
        "orm/declarative_mapping.html"),
    "load related objects in the same query instead of one query per object": (
        "orm/loading_relationships.html", "orm/queryguide.html"),
    "a parent with a list of children": ("orm/basic_relationships.html", "orm/self_referential.html"),
    "association table between two classes": ("orm/basic_relationships.html",),
    "execute a plain SQL string": ("core/connections.html", "tutorial/dbapi_transactions.html",
                                   "core/sqlelement.html"),
    "reuse database connections instead of opening new ones": ("core/pooling.html",),
    "undo everything when an error happens in the middle": (
        "orm/session_transaction.html", "core/connections.html", "orm/session_basics.html",
        "tutorial/dbapi_transactions.html"),
    "run my code whenever an object is about to be saved": ("orm/events.html", "orm/session_events.html"),
    "a computed property that also works inside queries": ("orm/extensions/hybrid.html", "orm/mapped_sql_expr.html"),
    "use it with async and await": ("orm/extensions/asyncio.html",),
    "subclasses stored in one table or in several tables": ("orm/inheritance.html", "orm/inheritance_loading.html"),
    "print every statement sent to the database": ("core/engines.html", "tutorial/engine.html",
                                                   "orm/quickstart.html"),
    "find out which part of my program is slow": ("faq/performance.html",),
    "store a python enum value in a column": ("core/type_basics.html",),
    "make my own column type that converts values": ("core/custom_types.html",),
    "load table definitions from an existing database": ("core/reflection.html", "orm/extensions/automap.html"),
    "insert or update when the key already exists on postgres": ("dialects/postgresql.html",),
    "select from two tables joined on a foreign key": (
        "tutorial/data_select.html", "orm/queryguide.html", "core/tutorial.html", "orm/tutorial.html"),
    "delete child rows automatically when the parent is deleted": ("orm/cascades.html",),
    "detect concurrent updates of the same row": ("orm/versioning.html",),
    "default value for a column when none is given": ("core/defaults.html",),
    "insert many rows in one go fast": ("orm/persistence_techniques.html", "tutorial/data_insert.html",
                                        "faq/performance.html", "core/dml.html"),
    "one session per web request thread": ("orm/contextual.html", "orm/session_basics.html"),
    "change how an attribute is stored when it is set": ("orm/mapped_attributes.html",),
    "expunge an object from the session and use it later": ("orm/session_state_management.html",
                                                            "orm/session_api.html"),
    "my session does not see rows that another process committed": ("faq/sessions.html",),
    "add the same filter to every query automatically": ("faq/sessions.html", "orm/session_events.html"),
    "use the engine safely after forking worker processes": ("faq/connections.html", "core/pooling.html"),
    "get the CREATE TABLE statement as a string": ("faq/metadata_schema.html",),
    "list every column and relationship of a mapped class": (
        "faq/ormconfiguration.html", "core/inspection.html", "orm/mapping_api.html"),
}

SPHINX = {
    "pull documentation out of python docstrings": (
        "usage/extensions/autodoc.html", "tutorial/automatic-doc-generation.html"),
    "link to the documentation of another project": ("usage/extensions/intersphinx.html",),
    "write the docs in markdown instead of restructuredtext": ("usage/markdown.html",),
    "change how the html pages look": ("usage/theming.html", "development/theming.html", "templating.html"),
    "translate the documentation into other languages": ("usage/advanced/intl.html",),
    "make a pdf of my documentation": ("latex.html", "usage/builders/index.html"),
    "check that the code examples in the docs still run": ("usage/extensions/doctest.html",),
    "google style docstrings": ("usage/extensions/napoleon.html", "usage/extensions/example_google.html"),
    "show equations in html pages": ("usage/extensions/math.html",),
    "create a new documentation project from scratch": (
        "usage/quickstart.html", "man/sphinx-quickstart.html", "tutorial/getting-started.html",
        "tutorial/first-steps.html"),
    "generate one page per module of my package automatically": (
        "man/sphinx-apidoc.html", "usage/extensions/autosummary.html"),
    "put a diagram made with dot into a page": ("usage/extensions/graphviz.html",),
    "link to a section by its heading text": ("usage/extensions/autosectionlabel.html",
                                              "usage/restructuredtext/roles.html"),
    "show the source code of documented functions": ("usage/extensions/viewcode.html",
                                                     "usage/extensions/linkcode.html"),
    "host the built documentation on the web": ("tutorial/deploying.html", "usage/extensions/githubpages.html"),
    "write my own extension that adds a directive": (
        "development/tutorials/helloworld.html", "development/tutorials/todo.html", "development/tutorials/recipe.html",
        "extdev/markupapi.html"),
    "include part of the docs only for some builds": ("usage/extensions/ifconfig.html",
                                                      "usage/restructuredtext/directives.html"),
    "list of settings in conf.py": ("usage/configuration.html",),
    "notes about unfinished work that appear in a list": ("usage/extensions/todo.html",),
    "which functions have no documentation yet": ("usage/extensions/coverage.html",),
    "class hierarchy picture": ("usage/extensions/inheritance.html",),
    "shorten links to an issue tracker": ("usage/extensions/extlinks.html",),
    "show the whole table of contents in the sidebar": ("faq.html", "usage/configuration.html"),
    "build and publish the docs on read the docs": ("faq.html", "tutorial/deploying.html"),
    "warn me about references that point nowhere": ("usage/configuration.html", "man/sphinx-build.html"),
    "mark a paragraph as new in a given version": ("usage/restructuredtext/directives.html",),
    "document a C++ class and its members": ("usage/restructuredtext/domains.html",),
    "let my extension read its own setting from conf.py": ("extdev/appapi.html", "development/tutorials/todo.html"),
}

REQUESTS = {
    "send a file to a server in a form upload": ("user/quickstart.html", "user/advanced.html"),
    "keep cookies between calls to the same site": ("user/advanced.html", "user/quickstart.html"),
    "give up when the server takes too long to answer": ("user/quickstart.html", "user/advanced.html"),
    "go through a proxy": ("user/advanced.html",),
    "log in with a username and password": ("user/authentication.html",),
    "turn off certificate checking": ("user/advanced.html",),
    "download a big file without loading it all into memory": ("user/advanced.html", "user/quickstart.html"),
    "parse the response body as json": ("user/quickstart.html",),
    "retry failed connections automatically": ("api.html",),
    "add custom headers to a call": ("user/quickstart.html",),
    "what went wrong when the server returns 404": ("user/quickstart.html", "api.html"),
    "get the address the redirects ended at": ("user/quickstart.html", "api.html"),
    "install the library with pip": ("user/install.html",),
    "report a security problem": ("community/vulnerabilities.html",),
    "send query parameters in the address": ("user/quickstart.html",),
    "send the same cookies and headers with every call to an API": ("user/advanced.html", "api.html"),
    "the response text comes out garbled, how do I pick the right character set": (
        "user/quickstart.html", "user/advanced.html", "community/faq.html"),
    "use the password stored in my netrc file": ("user/authentication.html",),
    "why do I get an error that the hostname doesn't match the certificate": ("community/faq.html",),
    "talk to a server that only accepts an older TLS version": ("user/advanced.html",),
    "add a signature to every outgoing request": ("user/advanced.html", "user/authentication.html"),
    "can I make calls without blocking my program": ("user/advanced.html",),
    "look at the request that was actually sent to the server": ("user/advanced.html",),
    "send a form as url encoded data": ("user/quickstart.html",),
    "which versions of python are supported": ("community/faq.html",),
    "upload a big file without reading it into memory first": ("user/advanced.html",),
    "see the headers the server sent back": ("user/quickstart.html",),
}

GIT = {
    "how do I fix a typo in the commit I just made": ("git-commit.html", "gitfaq.html", "user-manual.html"),
    "a bad commit is already on the main branch, how do I back it out without rewriting history": (
        "git-revert.html", "gitfaq.html", "user-manual.html"),
    "what is the difference between fetching and pulling": ("gitfaq.html", "git-pull.html", "git-fetch.html"),
    "stop tracking a file but keep it on my disk": ("git-rm.html", "gitfaq.html", "gitignore.html"),
    "put my unfinished work aside so I can switch to another branch": ("git-stash.html",),
    "replay my branch on top of the latest main branch": ("git-rebase.html",),
    "browse my repositories in a web browser": ("gitweb.html", "git-instaweb.html", "gitweb.conf.html"),
    "find the commit where the tests started failing": ("git-bisect.html", "git-bisect-lk2009.html"),
    "serve my repository to others over http": (
        "howto/setup-git-server-over-http.html", "git-http-backend.html", "git-update-server-info.html"),
    "which files have I changed but not committed yet": ("git-status.html", "git-diff.html"),
    "get back a file as it was two commits ago": ("git-restore.html", "git-checkout.html"),
    "include another project's repository inside mine": (
        "git-submodule.html", "gitsubmodules.html", "howto/using-merge-subtree.html"),
    "send my patches to a mailing list by email": (
        "git-send-email.html", "git-format-patch.html", "SubmittingPatches.html", "MyFirstContribution.html"),
    "refuse pushes that break our rules on the server": (
        "githooks.html", "gitfaq.html", "howto/update-hook-example.html"),
    "make the repository smaller and faster by cleaning it up": (
        "git-gc.html", "git-repack.html", "git-maintenance.html", "git-prune.html"),
    "one person appears under two names in the log": ("gitmailmap.html", "git-check-mailmap.html", "git-shortlog.html"),
    "check out only some folders of a huge repository": ("git-sparse-checkout.html", "git-clone.html"),
    "why does a file always show as modified on windows": ("gitfaq.html", "gitattributes.html"),
    "use two accounts on the same hosting site over ssh": ("gitfaq.html",),
    "move an old subversion repository to git": ("git-svn.html",),
    "set the name and email that go into my commits": (
        "git-config.html", "gitfaq.html", "gittutorial.html", "user-manual.html"),
    "apply a single commit from another branch to mine": ("git-cherry-pick.html",),
}

_J = "java.base/java/"
JAVA = {
    "get a result back from a task that runs on another thread": under(
        _J + "util/concurrent/", "Future", "Callable", "CompletableFuture", "ExecutorService"),
    "check whether a file exists before opening it": under(_J, "nio/file/Files", "io/File"),
    "remove items from a list while iterating over it": under(
        _J + "util/", "Iterator", "Collection", "ConcurrentModificationException"),
    "build a long string out of many pieces efficiently": under(_J, "lang/StringBuilder", "util/StringJoiner"),
    "a map that remembers the order keys were added in": under(_J, "util/LinkedHashMap"),
    "allow only a few threads to use a resource at the same time": under(_J, "util/concurrent/Semaphore"),
    "convert a timestamp to another time zone": under(_J + "time/", "ZonedDateTime", "ZoneId", "Instant"),
    "make an array bigger and keep its contents": under(_J, "util/Arrays", "lang/System"),
    "encrypt data with a key derived from a password": (
        "java.base/javax/crypto/Cipher.html", "java.base/javax/crypto/SecretKeyFactory.html",
        "java.base/javax/crypto/spec/PBEKeySpec.html"),
    "open a tcp connection to a server and send bytes": under(_J, "net/Socket", "nio/channels/SocketChannel"),
    "download the contents of a web address": under(_J + "net/", "URL", "HttpURLConnection", "URLConnection"),
    "start another program and read what it prints": under(_J + "lang/", "ProcessBuilder", "Process", "Runtime"),
    "how much memory is my program using": under(_J, "lang/Runtime"),
    "close a resource automatically at the end of a block": under(_J, "lang/AutoCloseable", "io/Closeable"),
    "sort people by last name and then by first name": under(_J, "util/Comparator"),
    "return a value that may be absent without using null": under(_J, "util/Optional"),
    "append a line of text to the end of a file": under(_J, "nio/file/Files", "nio/file/StandardOpenOption",
                                                        "io/FileWriter"),
    "count how often each word occurs in a list": under(_J + "util/", "stream/Collectors", "Map"),
    "load a resource file that ships inside my jar": under(_J + "lang/", "ClassLoader", "Class"),
    "call a method when I only know its name at runtime": under(_J + "lang/", "reflect/Method", "Class"),
    "a queue that makes producers wait when it is full": under(
        _J + "util/concurrent/", "BlockingQueue", "ArrayBlockingQueue", "LinkedBlockingQueue"),
    "wait until several threads have all finished": under(
        _J, "util/concurrent/CountDownLatch", "lang/Thread", "util/concurrent/ExecutorService",
        "util/concurrent/CompletableFuture"),
}

RUST = {
    "check whether a string begins with a given prefix": under("std/", "primitive.str", "string/struct.String"),
    "remove repeated elements from a vector": under("std/", "vec/struct.Vec", "collections/struct.HashSet"),
    "turn a number into a string": under("std/", "string/trait.ToString", "fmt/index", "macro.format"),
    "append to the end of a file instead of overwriting it": under("std/", "fs/struct.OpenOptions"),
    "wait for a spawned thread to finish and get its return value": under(
        "std/thread/", "struct.JoinHandle", "fn.spawn", "index"),
    "count how many times each word appears in a text": under(
        "std/collections/", "hash_map/enum.Entry", "struct.HashMap", "index"),
    "loop over a list together with the position of each item": under("std/iter/", "trait.Iterator", "struct.Enumerate"),
    "measure how long a piece of code takes to run": under("std/time/", "struct.Instant", "index"),
    "take a value out of a mutable reference and leave a default in its place": under(
        "std/mem/", "fn.take", "fn.replace"),
    "a value that may or may not be present": under("std/option/", "index", "enum.Option"),
    "pass errors up to the calling function": under("std/result/", "index", "enum.Result"),
    "make my own type printable with {}": under("std/fmt/", "trait.Display", "index"),
    "put a value on the heap": under("std/boxed/", "struct.Box", "index"),
    "change a value through a shared reference": under("std/cell/", "index", "struct.RefCell", "struct.Cell"),
    "several owners of one value in a single thread": under("std/rc/", "struct.Rc", "index"),
    "accept incoming tcp connections": under("std/net/", "struct.TcpListener"),
    "split a text into lines": under("std/", "primitive.str", "io/trait.BufRead", "str/struct.Lines"),
    "sort a list of floating point numbers": under("std/", "primitive.f64", "primitive.slice"),
    "run cleanup code when a value goes out of scope": under("std/ops/", "trait.Drop"),
    "initialize a global value only once": under("std/sync/", "struct.Once"),
    "convert between String and &str": under("std/", "string/struct.String", "primitive.str"),
}

EIGEN = {
    "my program crashes when a fixed size matrix is a member of my class": (
        "group__TopicStructHavingEigenMembers.html", "group__TopicUnalignedArrayAssert.html",
        "TopicUnalignedArrayAssert.html"),
    "why does a = a.transpose() give wrong results": ("group__TopicAliasing.html", "group__TutorialMatrixArithmetic.html"),
    "write a function that accepts any matrix expression as an argument": ("TopicFunctionTakingEigenTypes.html",),
    "which decomposition should I pick to solve my system quickly and accurately": (
        "group__TopicLinearAlgebraDecompositions.html", "group__TutorialLinearAlgebra.html",
        "group__DenseDecompositionBenchmark.html"),
    "use my own number type such as a multiprecision float": ("TopicCustomizing_CustomScalar.html",),
    "fill a vector with evenly spaced values between two numbers": (
        "classEigen_1_1DenseBase.html", "group__TutorialAdvancedInitialization.html", "group__QuickRefPage.html"),
    "apply my own function to every coefficient": ("classEigen_1_1CwiseUnaryOp.html", "group__QuickRefPage.html"),
    "find the largest entry and its position": (
        "group__TutorialReductionsVisitorsBroadcasting.html", "classEigen_1_1DenseBase.html"),
    "add a vector to every column of a matrix": (
        "group__TutorialReductionsVisitorsBroadcasting.html", "classEigen_1_1VectorwiseOp.html"),
    "rotate a point around an axis in 3D": (
        "group__TutorialGeometry.html", "classEigen_1_1AngleAxis.html", "classEigen_1_1Quaternion.html"),
    "change the shape of a matrix without copying its data": ("group__TutorialReshape.html",
                                                              "classEigen_1_1Reshaped.html"),
    "take every other row of a matrix": ("group__TutorialSlicingIndexing.html",),
    "make Eigen use Intel's math kernel library": ("TopicUsingIntelMKL.html",),
    "turn off the runtime checks to make my code faster": ("TopicAssertions.html", "TopicPreprocessorDirectives.html"),
    "solve a huge system with mostly zero entries iteratively": (
        "group__TopicSparseSystems.html", "group__IterativeLinearSolvers__Module.html",
        "classEigen_1_1ConjugateGradient.html", "classEigen_1_1BiCGSTAB.html"),
    "my program crashes when I pass matrices to a function by value": (
        "group__TopicPassingByValue.html", "group__TopicUnalignedArrayAssert.html"),
    "check whether two matrices are almost equal": ("classEigen_1_1DenseBase.html",),
    "length of a vector": ("classEigen_1_1MatrixBase.html", "group__TutorialReductionsVisitorsBroadcasting.html"),
    "convert a matrix of floats to doubles": ("group__QuickRefPage.html",),
    "use only the lower triangle of a matrix": (
        "classEigen_1_1MatrixBase.html", "classEigen_1_1TriangularView.html", "group__QuickRefPage.html"),
    "speed up matrix products by avoiding temporaries": (
        "TopicWritingEfficientProductExpression.html", "TopicLazyEvaluation.html", "group__TopicAliasing.html"),
}

OCTAVE = {
    "how do I make my loop faster by working on whole arrays at once": (
        "Basic-Vectorization.html", "Vectorization-and-Faster-Code-Execution.html", "Broadcasting.html"),
    "keep values of different types together in one variable": (
        "Cell-Arrays.html", "Basic-Usage-of-Cell-Arrays.html", "Structures.html", "Basic-Usage.html"),
    "write a function that accepts any number of inputs": ("Variable_002dlength-Argument-Lists.html",),
    "save my variables to a file and load them again in a later session": ("Simple-File-I_002fO.html",),
    "call Java classes from a script": (
        "Java-Interface.html", "How-to-use-Java-from-within-Octave.html", "Java-Interface-Functions.html"),
    "download a web page from inside a script": ("WWW-Access.html",),
    "run a shell command and capture what it prints": ("Controlling-Subprocesses.html",),
    "run some commands automatically every time Octave starts": ("Startup-Files.html",),
    "show several plots next to each other in one window": ("Multiple-Plots-on-One-Page.html",),
    "best straight line through a set of points": (
        "Linear-Least-Squares.html", "Polynomial-Interpolation.html", "Correlation-and-Regression-Analysis.html"),
    "estimate values between my measured data points": ("One_002ddimensional-Interpolation.html", "Interpolation.html"),
    "change how many digits are shown when numbers are printed": ("Terminal-Output.html",),
    "compile C++ code so that Octave can call it": (
        "Oct_002dFiles.html", "Getting-Started-with-Oct_002dFiles.html", "Mex_002dFiles.html",
        "Getting-Started-with-Mex_002dFiles.html", "External-Code-Interface.html"),
    "make sure cleanup code runs even when an error happens": (
        "The-unwind_005fprotect-Statement.html", "The-try-Statement.html"),
    "check that the arguments passed to my function are valid": (
        "Validating-Arguments.html", "Validating-the-type-of-Arguments.html",
        "Validating-the-number-of-Arguments.html", "Parsing-Arguments.html"),
    "let the user pick a file in a dialog window": ("I_002fO-Dialogs.html",),
    "store values under string keys like a dictionary": ("containers_002eMap.html",),
    "turn a number into text": ("Numerical-Data-and-Strings.html", "Formatted-Output.html"),
    "hide a warning message I keep getting": ("Enabling-and-Disabling-Warnings.html",),
    "find out which part of my script takes the most time": ("Profiling.html", "Profiler-Example.html"),
    "a variable inside a function that keeps its value between calls": ("Persistent-Variables.html",),
}

NATURAL = {
    "postgresql": POSTGRES,
    "sqlite": SQLITE,
    "scipy": SCIPY,
    "sqlalchemy": SQLALCHEMY,
    "sphinx": SPHINX,
    "requests": REQUESTS,
    "java": JAVA,
    "rust": RUST,
    "git": GIT,
    "eigen": EIGEN,
    "octave": OCTAVE,
}
