// Fleet inspection: many nodes side by side, drift between them, HTML/CSV reports.
export * from '../../../shared/fleet';
export { surveyFleet, sshProbe, unreachableResult, DEFAULT_FLEET_CONCURRENCY, DEFAULT_NODE_TIMEOUT_MS, type FleetOptions, type NodeProbe } from './survey';
export { computeDrift, DriftAccumulator, isPinnedNow } from './drift';
export { summarizeFleet, nodeRisk, isLowDisk, losingImagesOf, protectionOf, warningsOf, DEFAULT_LOW_DISK, type LowDiskRule } from './summary';
export { formatBytes } from '../../../shared/format';
export { diskOf, diskOfSession, parseDf } from './disk';
export { fleetHtml, escapeHtml, html, SafeHtml } from './html';
export { fleetCsv, csvField, csvLine, parseCsv, FLEET_CSV_COLUMNS } from './csv';
export { parseNodeCsv, BULK_COLUMNS, BULK_MAX_BYTES } from './bulk';
