// The server thread's entry (main.ts starts it): runs the apiserver's bundle, thread.cjs, through the V8
// code cache beside it, and once the apiserver serves, writes that cache if this start had none. A
// failure to start rejects here and ends the thread with it, as it did when this was the server's module.
import { runBundle } from "@orch/code-cache";

await runBundle(new URL("./thread.cjs", import.meta.url), "serving");
