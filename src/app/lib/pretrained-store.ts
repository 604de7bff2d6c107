// The store of pretrained models as the app sees it: files fetched from `pretrained/` beside the
// app (Vite serves public/ at the base, and `npm run build` copies it into dist/), decoded and
// checked by the same code as in Node (experiment/store.ts).
import { fileStore, type PretrainStore } from "../../experiment/store";

export function webPretrainedStore(base: string = document.baseURI): PretrainStore {
  const root = new URL("pretrained/", base);
  return fileStore(root.href.replace(/\/$/, ""), async (name) => {
    const res = await fetch(new URL(name, root));
    // a static host (and Vite's dev server) may answer a missing file with the app's page
    if (res.status === 404 || res.headers.get("content-type")?.includes("text/html"))
      return undefined;
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  });
}
