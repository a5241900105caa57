// The lab: simulated k3s nodes on loopback (real containerd + real sshd in private mount
// namespaces), k3s start-up emulation and fixture archives. Test tooling only.
export { startLab, checkLabPrerequisites, labUserName, type Lab, type LabUser, type LabUserSpec, type StartLabOptions } from './lab.ts';
export {
  CONTAINERD_LINES,
  availableContainerdLines,
  containerdBinaries,
  defaultContainerdLine,
  isContainerdLine,
  LAB_DISTROS,
  defaultLabDistro,
  type ContainerdLine,
  type LabDistro,
} from './containerd.ts';
export {
  K3S_SOCKET,
  K3S_IMAGES_DIR,
  KUBECTL_FIXTURE_NAME,
  REAL_KUBECTL,
  imagesDirOf,
  type LabNodeHandle,
  type LabNodeView,
  type SshdOptions,
} from './node.ts';
export {
  emulateK3sStart,
  startK3sWatcher,
  labelsOf,
  listImages,
  clearLabels,
  importArchive,
  pinImages,
  archiveImageNames,
  normalizeDockerRef,
  parseNamedTagged,
  retagErrors,
  K3sImportError,
  repositoryOf,
  hostImagesDirOf,
  nodeImagesDir,
  isSupportedArchive,
  distroPinLabel,
  parseCtrImagesLs,
  ARCHIVE_SUFFIXES,
  PREPULL_SUFFIX,
  CACHE_FILE,
  CRI_PIN_LABEL,
  type CtrImage,
  type Distro,
  type FailedImport,
  type ImportCache,
  type ImportCacheEntry,
  type ImportedArchive,
  type K3sOptions,
  type K3sStartReport,
  type K3sWatcher,
  type StartupWalk,
  type WatcherOptions,
} from './k3s.ts';
export {
  writeImageArchive,
  buildImageArchive,
  type ArchiveCompression,
  type ArchiveFormat,
  type FixtureImageSpec,
  type WriteImageArchiveOptions,
  type WriteImageArchiveResult,
  type WrittenImage,
} from './fixtures.ts';
export {
  workloadList,
  kubectlJson,
  type WorkloadDescription,
  type KubeList,
  type KubeObject,
  type NodeDesc,
  type PodTemplateDesc,
  type DeploymentDesc,
  type ReplicaSetDesc,
  type StatefulSetDesc,
  type DaemonSetDesc,
  type JobDesc,
  type CronJobDesc,
  type ReplicationControllerDesc,
  type PodDesc,
  type Placement,
} from './workloads.ts';
export { attachLabNode, labNodeNames } from './attach.ts';
export { SEED_ARCHIVE, SEED_REPORT_IMAGE, SEED_SAMPLE_IMAGE, seedWorkloads, writeSeedArchive } from './seed.ts';
export { criImages, criImageStatus, criPinned, type CriImage } from './cri.ts';
export { readImportPlan, k3sEntryName, type ImportPlan, type ImportEntry } from './importPlan.ts';
export { startApiServer, clusterRulesFor, requestInfo, allowedBy, type LabApiServer, type PolicyRule, type RecordedRequest, type RequestInfo } from './apiServer.ts';
