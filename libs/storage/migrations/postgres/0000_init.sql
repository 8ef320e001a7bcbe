CREATE TABLE "changes" (
	"revision" bigint PRIMARY KEY NOT NULL,
	"resource" text COLLATE "C" NOT NULL,
	"namespace" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"type" text NOT NULL,
	"value" text,
	"value_bytes" "bytea",
	"prev_revision" bigint NOT NULL,
	"prev_value" text,
	"prev_value_bytes" "bytea",
	"committed_at" bigint NOT NULL,
	CONSTRAINT "changes_one_value" CHECK (num_nonnulls(value, value_bytes) = 1)
);
--> statement-breakpoint
CREATE TABLE "counters" (
	"name" text PRIMARY KEY NOT NULL,
	"value" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "objects" (
	"resource" text COLLATE "C" NOT NULL,
	"namespace" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"revision" bigint NOT NULL,
	"value" text,
	"value_bytes" "bytea",
	CONSTRAINT "objects_key" PRIMARY KEY("resource","namespace","name"),
	CONSTRAINT "objects_one_value" CHECK (num_nonnulls(value, value_bytes) = 1)
);
--> statement-breakpoint
CREATE INDEX "changes_key" ON "changes" USING btree ("resource","namespace","name","revision");--> statement-breakpoint
CREATE INDEX "changes_resource" ON "changes" USING btree ("resource","revision");