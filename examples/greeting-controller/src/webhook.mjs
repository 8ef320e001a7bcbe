// The Greeting admission webhook: refuses a Greeting that shouts (its spec.name all capitals), with a
// reason the user sees. An HTTPS server answering AdmissionReview v1, as the apiserver calls it.
import { createServer } from "node:https";

/** Why a Greeting is refused, or undefined when it is welcome. */
export const refusal = (greeting) => {
  const name = greeting?.spec?.name ?? "";
  return /[A-Z]/.test(name) && name === name.toUpperCase() ? `please do not shout: greet "${name}" in lower case` : undefined;
};

/** Serves the webhook at https://127.0.0.1:<port>/validate with `tls` ({ cert, key }); resolves once listening. */
export async function startGreetingWebhook(tls) {
  const server = createServer(tls, (req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const review = JSON.parse(body);
      const why = refusal(review.request.object);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: review.request.uid, allowed: !why, ...(why ? { status: { code: 422, message: why } } : {}) },
        }),
      );
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${server.address().port}/validate`,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}
