CREATE TABLE `changes` (
	`revision` integer PRIMARY KEY NOT NULL,
	`resource` text NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`value` text NOT NULL,
	`prev_revision` integer NOT NULL,
	`prev_value` text,
	`committed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `changes_key` ON `changes` (`resource`,`namespace`,`name`,`revision`);--> statement-breakpoint
CREATE TABLE `counters` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `objects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`resource` text NOT NULL,
	`namespace` text NOT NULL,
	`name` text NOT NULL,
	`revision` integer NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `objects_key` ON `objects` (`resource`,`namespace`,`name`);