// What metering costs: 20 CRD validation rules of the kinds real CRDs carry, compiled once and evaluated
// on one object, with cel-go's runtime cost counted (runtime-cost.ts) as every evaluation does.
// Run: npx tsx libs/cel/bench/rule-evaluation.ts
import { type RuleType, compileCrdRules } from "../src/index.js";

const str: RuleType = { kind: "string" };
const int: RuleType = { kind: "int" };
const port: RuleType = {
  kind: "object",
  fields: [
    { name: "name", type: str },
    { name: "port", type: int },
    { name: "protocol", type: str },
  ],
};
const type: RuleType = {
  kind: "object",
  fields: [
    { name: "replicas", type: int },
    { name: "minReplicas", type: int },
    { name: "name", type: str },
    { name: "image", type: str },
    { name: "memory", type: str },
    { name: "tags", type: { kind: "list", item: str } },
    { name: "ports", type: { kind: "list", item: port } },
    { name: "labels", type: { kind: "map", value: str } },
  ],
};
const rules = [
  "self.replicas >= 0",
  "self.replicas >= self.minReplicas",
  "!has(self.minReplicas) || self.minReplicas <= 100",
  "self.name.size() <= 63",
  "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  "self.image.contains(':') || self.image.contains('@')",
  "quantity(self.memory).compareTo(quantity('64Mi')) >= 0",
  "self.tags.all(t, t.size() > 0)",
  "self.tags.size() == self.tags.filter(t, t.startsWith('x-') == false).size() || true",
  "self.ports.all(p, p.port > 0 && p.port < 65536)",
  "self.ports.all(p, p.protocol in ['TCP', 'UDP', 'SCTP'])",
  "self.ports.exists_one(p, p.name == 'http') || !self.ports.exists(p, p.name == 'http')",
  "self.ports.map(p, p.port).isSorted() || true",
  "size(self.labels) <= 64",
  "self.labels.all(k, k.size() <= 63)",
  "!('forbidden' in self.labels)",
  "self.tags.size() <= 10",
  "cel.bind(n, self.name, n.lowerAscii() == n)",
  "self.ports.all(a, self.ports.exists_one(b, a.port == b.port))",
  "has(self.labels) && self.labels.?app.orValue('') != 'legacy'",
];
const compiled = compileCrdRules(
  type,
  rules.map((rule) => ({ rule })),
);
const self = {
  replicas: 3,
  minReplicas: 1,
  name: "web-frontend",
  image: "registry.example.com/web:1.2.3",
  memory: "256Mi",
  tags: ["a", "b", "c", "d"],
  ports: [
    { name: "http", port: 80, protocol: "TCP" },
    { name: "https", port: 443, protocol: "TCP" },
    { name: "dns", port: 53, protocol: "UDP" },
  ],
  labels: { app: "web", tier: "frontend" },
};
let cost = 0;
const once = () => {
  cost = 0;
  for (const rule of compiled) {
    const r = rule.evaluate(self, undefined, 1_000_000);
    if (!r.ok || r.value !== true) throw new Error(`rule failed: ${JSON.stringify(r)}`);
    cost += r.cost;
  }
};
for (let i = 0; i < 2_000; i++) once();
const N = 20_000;
const start = process.hrtime.bigint();
for (let i = 0; i < N; i++) once();
const us = Number(process.hrtime.bigint() - start) / 1e3 / N;
console.log(`20 rules on one object: ${us.toFixed(1)} µs per object (${N} objects), cel-go runtime cost ${cost} per object`);
