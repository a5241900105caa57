// The options of an import (pin, remove the archive) and the rule between them: removing the
// archive is only safe once its images are durably pinned, so never one without the other.
// One rule, applied by the service (jobs.startImport, which `holdfast import` calls too); the
// app's wizard keeps its options consistent with it.

export interface ImportOptions {
  pin: boolean;
  removeArchive: boolean;
}

/** Why these options cannot go together, or null. */
export function importOptionsProblem(o: ImportOptions): string | null {
  return o.removeArchive && !o.pin ? 'removing the archive needs its pins made durable first: an archive is only removed once its images are durably pinned' : null;
}

/** The options as the wizard keeps them: turning pins off turns removing the archive off. */
export const consistentImportOptions = <T extends ImportOptions>(o: T): T => (o.pin || !o.removeArchive ? o : { ...o, removeArchive: false });
