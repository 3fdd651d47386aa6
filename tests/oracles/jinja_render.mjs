// Renders chat templates with @huggingface/jinja (the npm package transformers.js uses),
// the reference `template_oracle.py` compares `ember template` with.
// usage: node jinja_render.mjs NODE_MODULES_DIR JOBS.json OUT.json
// JOBS: [{"template": source, "context": {...}}]; OUT: [{"ok": true, "text": ...} or
// {"ok": false, "error": message}], one per job.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, jobsPath, outPath] = process.argv.slice(2);
const { Template } = await import(
  pathToFileURL(join(modules, "@huggingface/jinja/dist/index.js")).href);
const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));
const cache = new Map();
const results = jobs.map(({ template, context }) => {
  try {
    if (!cache.has(template)) cache.set(template, new Template(template));
    return { ok: true, text: cache.get(template).render(context) };
  } catch (e) {
    return { ok: false, error: String(e.message || e) };
  }
});
writeFileSync(outPath, JSON.stringify(results));
