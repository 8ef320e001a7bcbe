// @orch/orchlet: the app is `main.ts`; these are its parts, for tests and readers.
export { PodAddresses, nodeAddress, nodePodCidr } from "./addresses.js";
export { type OrchletConfig, nodeNames, orchletConfig } from "./config.js";
export { agentWords, healthyConditions } from "./node.js";
export { type Plan, type PodMemory, backoffMs, goDuration, planPod, qosClass } from "./pod-status.js";
export { type Simulation, parseDuration, parseSimulation, simulateAnnotation } from "./simulate.js";
