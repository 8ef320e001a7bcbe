// metadata.generateName → name, as the apiserver's SimpleNameGenerator does (storage/names/generate.go).
import { randomInt } from "node:crypto";
import { truncateUtf8 } from "../values/utf8.js";

/** Vowels are left out so that random suffixes never spell words. */
export const nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";
export const randomNameSuffixLength = 5;
/** 63 (a DNS label) minus the suffix: generated names stay valid DNS labels when the base is one. */
export const maxGeneratedNameBaseLength = 63 - randomNameSuffixLength;

/** `n` characters drawn uniformly from the suffix alphabet. */
export function randomNameSuffix(n = randomNameSuffixLength): string {
  let s = "";
  for (let i = 0; i < n; i++) s += nameSuffixAlphabet[randomInt(nameSuffixAlphabet.length)];
  return s;
}

/**
 * The base truncated to 58 bytes, then five random characters. Kubernetes slices bytes and may split a
 * multi-byte character; we stop before it instead (such a base is not a valid name either way).
 */
export function generateName(base: string, suffix: () => string = randomNameSuffix): string {
  return truncateUtf8(base, maxGeneratedNameBaseLength) + suffix();
}
