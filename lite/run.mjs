// make test-lite, Node side: start the pinned Pyodide (fetched and verified by lite/fetch.py), load
// numpy/scipy/pandas from its own wasm builds, let the host files in through NODEFS, and run
// lite/runner.py inside it.  Exit status: the runner's (0 = all passed), 2 = set-up error.
//
//   node lite/run.mjs --cache .lite-cache --repo .  [--bench]
import { readFileSync, existsSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const repo = resolve(option("repo", "."));
const cache = resolve(option("cache", `${repo}/.lite-cache`));
const mode = process.argv.includes("--bench") ? "bench" : "test";
const manifestPath = `${cache}/manifest.json`;
if (!existsSync(manifestPath)) {
  console.error(`test-lite: ${manifestPath} is missing: run python lite/fetch.py first`);
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));

const started = Date.now();
const { loadPyodide } = await import(pathToFileURL(`${manifest.index}/pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL: `${manifest.index}/` });
// checkIntegrity (the default) checks every file against the sha256 in the official lock file
await pyodide.loadPackage(manifest.load, {
  messageCallback: () => {},
  errorCallback: (m) => console.error(m),
});
const version = pyodide.version;
console.log(`test-lite: Pyodide ${version} under Node ${process.version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

const FS = pyodide.FS;
for (const [host, where] of [[repo, "/host/repo"], [cache, "/host/cache"]]) {
  FS.mkdirTree(where);
  FS.mount(FS.filesystems.NODEFS, { root: host }, where);
}
// micropip.install called from JavaScript ignores a plain {deps: false} options object: keyword
// arguments must be passed with callKwargs.
const micropip = pyodide.pyimport("micropip");
const built = existsSync(`${cache}/dist`) ? readdirSync(`${cache}/dist`).filter((f) => /^xlcalib-.*-py3-none-any\.whl$/.test(f)) : [];
if (built.length !== 1) {
  console.error(`test-lite: expected one xlcalib wheel in ${cache}/dist (make test-lite builds it), found ${built.length}`);
  process.exit(2);
}
const wheels = [...manifest.wheels.map((w) => w.replace(cache, "/host/cache")), `/host/cache/dist/${built[0]}`];
await micropip.install.callKwargs(wheels.map((w) => `emfs:${w}`), { deps: false });

pyodide.globals.set("LITE_MODE", mode);
let code;
try {
  code = await pyodide.runPythonAsync(readFileSync(`${repo}/lite/runner.py`, "utf8"));
} catch (err) {
  console.error(`test-lite: the Python runner crashed inside Pyodide:\n${err}`);
  code = 1;
}
console.log(`test-lite: finished in ${((Date.now() - started) / 1000).toFixed(1)} s (exit ${code})`);
process.exit(code);
