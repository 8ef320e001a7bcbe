// CEL's `matches()` is RE2 in Kubernetes: linear time, no backreferences, no lookaround. The engine
// here runs JavaScript's backtracking RegExp, so two guards keep a pattern from stalling the process:
// V8 falls back to its linear-time engine after excessive backtracking (a process-wide flag, set once
// on import), and patterns that engine cannot run (backreferences, lookaround: the constructs RE2
// rejects anyway) are refused before they run.
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");

/** Why `pattern` may not be used by `matches()`, in RE2's words; undefined when it may. */
export function regexpProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
  } catch (e) {
    return `error parsing regexp: ${(e as Error).message}`;
  }
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && (/[1-9]/.test(next) || (next === "k" && pattern[i + 2] === "<"))) {
        return `error parsing regexp: invalid escape sequence: \`\\${next}\``;
      }
      i++;
    } else if (c === "[") {
      inClass = true;
    } else if (c === "]") {
      inClass = false;
    } else if (!inClass && c === "(" && pattern[i + 1] === "?") {
      const look = /^\(\?(=|!|<=|<!)/.exec(pattern.slice(i));
      if (look) return `error parsing regexp: invalid or unsupported Perl syntax: \`${look[0]}\``;
    }
  }
  return undefined;
}
