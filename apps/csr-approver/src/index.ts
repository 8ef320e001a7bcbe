// @orch/csr-approver: the app is `main.ts`; these are its decisions, for tests and readers.
export { type ResourceAttributes, accessReviewFor, requesterMay, subjectAccessReviews } from "./access-review.js";
export { type ApproverOptions, csrApprover } from "./approver.js";
export { type Csr, parseRequest } from "./csr.js";
export { type Recognition, awaitsApproval, isNodeClientCert, isSelfNodeClientCert, recognize } from "./recognize.js";
