// Bundles each examples/openhuman/NAME/src/index.ts into OUT/NAME/index.js with esbuild, the way
// OpenHuman's build script does, and copies NAME/manifest.json beside it.
//
// Usage: node build.mjs ESBUILD_MAIN_JS SOURCE_DIR OUT_DIR   (scripts/build-bundles.sh runs it)
import { createRequire } from "node:module";
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [esbuildMain, sourceDir, outDir] = process.argv.slice(2);
if (!esbuildMain || !sourceDir || !outDir) {
  console.error("usage: node build.mjs ESBUILD_MAIN_JS SOURCE_DIR OUT_DIR");
  process.exit(2);
}
const esbuild = createRequire(import.meta.url)(esbuildMain);

// What the bundle's footer does: the skill object becomes globalThis.__skill.default, and a bundle that
// put its tools on globalThis gets them copied onto the skill when the skill has none.
const footer = [
  "globalThis.__skill = { default: __skill_bundle.default };",
  "if (globalThis.__skill.default && !globalThis.__skill.default.tools && globalThis.tools) " +
    "globalThis.__skill.default.tools = globalThis.tools;",
].join("\n");

const names = readdirSync(sourceDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(sourceDir, d.name, "src", "index.ts")))
  .map((d) => d.name)
  .sort();
if (names.length === 0) {
  console.error(`build.mjs: no bundle sources (NAME/src/index.ts) under ${sourceDir}`);
  process.exit(1);
}
for (const name of names) {
  const out = join(outDir, name);
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    absWorkingDir: sourceDir, // the path comments in the output name files relative to examples/openhuman
    entryPoints: [join(sourceDir, name, "src", "index.ts")],
    outfile: join(out, "index.js"),
    bundle: true,
    format: "iife",
    globalName: "__skill_bundle",
    platform: "neutral",
    target: "es2019",
    footer: { js: footer },
    logLevel: "warning",
    charset: "utf8",
    legalComments: "none",
  });
  copyFileSync(join(sourceDir, name, "manifest.json"), join(out, "manifest.json"));
  console.log(`build.mjs: ${name}/index.js`);
}
