// Nx plugin (listed in nx.json "plugins"): every app or tool with a src/main.ts gets a `build` target that
// bundles that project alone with tools/build.mjs, so an app that `npm run new-controller` writes is built
// (and started by `npm start`) without configuring anything. Caching, inputs and outputs of the target
// are nx.json's targetDefaults.build.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

export const name = "orch-build-targets";

export const createNodes = [
  "{apps,tools}/*/src/main.ts",
  (mainFiles, _options, context) =>
    mainFiles
      .map((main) => [main, dirname(dirname(main))])
      .filter(([, root]) => existsSync(join(context.workspaceRoot, root, "package.json")))
      .map(([main, root]) => [
        main,
        {
          projects: {
            [root]: {
              targets: {
                build: {
                  command: `node tools/build.mjs ${root}`,
                  metadata: {
                    description: `esbuild bundles of ${root}/src/main.ts and its other entries (tools/build.mjs) into ${root}/dist`,
                  },
                },
              },
            },
          },
        },
      ]),
];
