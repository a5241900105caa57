// What direct delivery (`holdfast import --direct`, issue #35) reads from an archive on this
// machine before it talks to any node: every image's tree of blobs, with the names k3s's import
// would give the images, and each blob's bytes spooled to a local file so that every node can be
// sent just the blobs it lacks, from any offset (an interrupted write resumes where containerd's
// ingest stopped). The writer (write.ts) walks these trees; spool.ts builds them.
import type { Platform } from '../../../shared/mediaTypes';

/** One blob as an OCI descriptor names it. */
export interface BundleBlob {
  digest: string;
  size: number;
  mediaType: string;
}

/** A platform manifest with what it references. */
export interface BundleManifest {
  manifest: BundleBlob;
  /** os/arch[/variant] from the index entry or the config; null when neither says. */
  platform: Platform | null;
  config: BundleBlob;
  layers: BundleBlob[];
}

/** An index entry: the manifest when the archive holds it, else only its descriptor. */
export interface BundleIndexEntry {
  descriptor: BundleBlob & { platform: Platform | null; attestation: boolean };
  /** null when the archive lacks this manifest (k3s's import skips it: WithSkipMissing). */
  manifest: BundleManifest | BundleIndex | null;
}

export interface BundleIndex {
  index: BundleBlob;
  entries: BundleIndexEntry[];
}

export interface BundleImage {
  /**
   * Normalised names the image gets on the node (docker-save RepoTags; OCI
   * io.containerd.image.name / ref.name; Zarf org.opencontainers.image.base.name; Hauler's
   * recorded name). Never empty: unnamed entries are left out of `images`.
   */
  names: string[];
  /** The image's target: a manifest (docker-save: the one containerd's importer would write) or an index. */
  target: BundleManifest | BundleIndex;
}

export type BundleKind = 'docker' | 'oci' | 'zarf' | 'hauler';

export interface SpooledBundle {
  kind: BundleKind;
  images: BundleImage[];
  /**
   * Local files holding each blob's exact bytes, by digest (a docker-save archive's synthesised
   * manifests included). Blobs the archive lacks are absent.
   */
  files: Map<string, string>;
  /** Removes the spool directory. */
  dispose(): Promise<void>;
}
