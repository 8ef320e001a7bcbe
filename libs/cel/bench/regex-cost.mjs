// Cost of RE2 (re2js) against JavaScript RegExp on patterns of real CRDs: node libs/cel/bench/regex-cost.mjs
// (re2-wasm was measured the same way, outside the repository: ~2,300 ns/match.)
import { RE2JS } from "re2js";
// Patterns from real CRDs (Gateway API, cert-manager, Istio-like)
const pats = [
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
  "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
  "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$",
  "^/[\\-A-Za-z0-9_./~%!$&'()*+,;=:@]*$",
  "^(?i)(abort|warn)?$",
  "^([0-9]{1,5}(h|m|s|ms)){1,4}$",
  "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$",
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
];
const inputs = [
  "example.com",
  "*.foo.example.com",
  "my-service",
  "/api/v1/foo",
  "WARN",
  "10s",
  "X-Header-Name",
  "example.com/my-class",
  "a-much-longer-name.with.many.subdomains.example.org",
];
const N = 20000;
function run(name, compile, test) {
  let t = process.hrtime.bigint();
  const compiled = pats.map(compile);
  const ct = Number(process.hrtime.bigint() - t) / 1e6;
  t = process.hrtime.bigint();
  let hits = 0;
  for (let i = 0; i < N; i++) for (const re of compiled) for (const s of inputs) if (test(re, s)) hits++;
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const tests = N * compiled.length * inputs.length;
  console.log(
    `${name}: compile ${pats.length} patterns ${ct.toFixed(2)} ms; ${tests} matches in ${ms.toFixed(0)} ms = ${((ms * 1e6) / tests).toFixed(0)} ns/match; hits ${hits}`,
  );
}
const jsPats = pats.map((p) => p.replace("(?i)", ""));
let k = 0;
run(
  "RegExp",
  () => new RegExp(jsPats[k++], "u"),
  (re, s) => re.test(s),
);
run(
  "re2js",
  (p) => RE2JS.compile(p),
  (re, s) => re.test(s),
);
