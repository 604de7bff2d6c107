// Writes the project's tiny test models (Hugging Face layout) to a folder, e.g. to serve them
// to the app as a local model path:  npx tsx scripts/make-tiny-models.ts public/models
import { join, resolve } from "node:path";
import { tinyModelFiles } from "../src/lm/tiny";
import { writeHfFolder } from "../src/lm/tiny/write-files";

const out = resolve(process.argv[2] ?? "tiny-models");
for (const [name, files] of Object.entries(tinyModelFiles())) {
  await writeHfFolder(join(out, name), files);
  console.log(`${join(out, name)}: ${Object.keys(files).join(", ")}`);
}
