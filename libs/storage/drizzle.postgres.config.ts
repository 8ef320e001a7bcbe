import { defineConfig } from "drizzle-kit";

// `npx drizzle-kit generate --config libs/storage/drizzle.postgres.config.ts` after a change to the schema.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/postgres/schema.ts",
  out: "./migrations/postgres",
});
