// The Greeting controller: for every Greeting, status.message = "Hello, <spec.name>". Level-triggered:
// each add or update of a Greeting compares what is with what should be, and writes only a difference.
import { CustomObjectsApi, KubeConfig, makeInformer } from "@kubernetes/client-node";

const greetings = { group: "example.com", version: "v1", plural: "greetings" };

export const greetingFor = (greeting) => `Hello, ${greeting.spec.name}`;

/** Runs the controller with `kubeconfig` (YAML text) on `namespace`; resolves once it is watching. */
export async function startGreetingController(kubeconfig, namespace = "default") {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const api = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer(kc, `/apis/${greetings.group}/${greetings.version}/namespaces/${namespace}/${greetings.plural}`, () =>
    api.listNamespacedCustomObject({ ...greetings, namespace }),
  );
  const reconcile = async (greeting) => {
    const message = greetingFor(greeting);
    if (greeting.status?.message === message) return;
    try {
      await api.replaceNamespacedCustomObjectStatus({
        ...greetings,
        namespace,
        name: greeting.metadata.name,
        body: { ...greeting, status: { message } },
      });
    } catch (e) {
      // A conflict means a newer version exists: its own update event brings it back here.
      if (e.code !== 409) console.error(`greeting ${greeting.metadata.name}:`, e.message);
    }
  };
  let stopped = false;
  informer.on("add", reconcile);
  informer.on("update", reconcile);
  // The informer stops on a watch error: start it again, unless we are the ones who stopped it.
  informer.on("error", () => stopped || setTimeout(() => stopped || informer.start(), 500));
  await informer.start();
  return {
    stop: async () => {
      stopped = true;
      await informer.stop();
    },
  };
}
