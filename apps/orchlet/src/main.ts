// The orchlet process: app.ts, bundled as app.cjs, run through the V8 code cache beside it, which the
// first start after a build writes once its nodes are ready (@orch/code-cache).
import { runBundle } from "@orch/code-cache";

await runBundle(new URL("./app.cjs", import.meta.url), "working");
