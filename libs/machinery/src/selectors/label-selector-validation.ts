// metav1 LabelSelector validation as k8s.io/apimachinery/pkg/apis/meta/v1/validation has it
// (ValidateLabelSelector, ValidateLabelSelectorRequirement, ValidateLabelName), same paths and texts.
import { type FieldError, type FieldPath, fieldError } from "../validation/field-errors.js";
import type { LabelSelectorObject } from "./labels.js";
import { isQualifiedName, isValidLabelValue } from "../validation/names.js";
import { validateLabels } from "../validation/objectmeta.js";

export interface LabelSelectorValidationOptions {
  /** Tolerate invalid values in `matchExpressions` (Kubernetes allows it only for existing objects). */
  allowInvalidLabelValueInSelector?: boolean;
}

/** ValidateLabelName: a qualified name, reported at `path` with the name as value. */
export function validateLabelName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => fieldError.invalid(path, name, msg));
}

/** ValidateLabelSelector: `matchLabels` as labels, each requirement's operator, values and key. */
export function validateLabelSelector(
  selector: LabelSelectorObject | null | undefined,
  path: FieldPath,
  options: LabelSelectorValidationOptions = {},
): FieldError[] {
  if (!selector) return [];
  const errs = validateLabels(selector.matchLabels, path.child("matchLabels"));
  (selector.matchExpressions ?? []).forEach((req, i) => {
    const at = path.child("matchExpressions").index(i);
    const values = req.values ?? [];
    switch (req.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) {
          errs.push(fieldError.required(at.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) {
          errs.push(fieldError.forbidden(at.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        }
        break;
      default:
        errs.push(fieldError.invalid(at.child("operator"), req.operator, "not a valid selector operator"));
    }
    errs.push(...validateLabelName(req.key, at.child("key")));
    if (!options.allowInvalidLabelValueInSelector) {
      values.forEach((value, j) => {
        for (const msg of isValidLabelValue(value)) errs.push(fieldError.invalid(at.child("values").index(j), value, msg));
      });
    }
  });
  return errs;
}
