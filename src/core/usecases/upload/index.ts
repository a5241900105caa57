// Uploading image archives into a node's k3s images dir: staged under a name k3s ignores,
// verified by SHA-256 on the node, renamed into place; resumable, cancellable, space-checked.
export { uploadArchive, isAbortError, DEFAULT_INFLIGHT, type UploadOptions, type UploadResult } from './upload';
export type { UploadPhase, UploadProgress } from './progress';
export { PARTIAL_SUFFIX, stagingName, uploadTarget, type UploadTarget } from '../../access/paths';
