// Pagefind's own search (pagefind.js, as a browser runs it) over a bundle on disk, for the
// relevance benchmark (systems.py, class Pagefind).
//
//     node pagefind_search.mjs BUNDLE_DIR
//
// Reads one JSON object a line on stdin, {"query": "...", "k": 10}, and writes one a line
// on stdout, {"urls": [...]}: the first k results' URLs, best first, as Pagefind ranks them
// with its default settings. pagefind.js fetches its files under "/pagefind/"; fetch is
// replaced by a read of the bundle's files (no server, no network).
import { readFile } from "node:fs/promises";
import path from "node:path";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const bundle = path.resolve(process.argv[2]);
const BASE = "/pagefind/";
globalThis.fetch = async (input) => {
  const url = String(input);
  if (!url.startsWith(BASE)) throw new Error(`pagefind_search: unexpected fetch of ${url}`);
  return new Response(await readFile(path.join(bundle, url.slice(BASE.length).split("?")[0])));
};
const pagefind = await import(pathToFileURL(path.join(bundle, "pagefind.js")).href);
await pagefind.options({ basePath: BASE, baseUrl: "/" });
await pagefind.init();

for await (const line of readline.createInterface({ input: process.stdin })) {
  const { query, k } = JSON.parse(line);
  const found = await pagefind.search(query);
  const shown = await Promise.all((found?.results ?? []).slice(0, k).map((result) => result.data()));
  process.stdout.write(JSON.stringify({ urls: shown.map((data) => data.url) }) + "\n");
}
