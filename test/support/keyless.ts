// Keyless signing for tests (#48), with @sigstore/mock's Fulcio CA, Rekor log and timestamp
// authority: the trusted_root.json a technician would carry for them, and Sigstore bundles v0.3
// (DSSE over an in-toto statement naming an image digest) signed by a short-lived certificate,
// with a real transparency-log entry and RFC 3161 timestamp. Nothing here uses the network.
import { createHash, generateKeyPairSync, randomInt, sign } from 'node:crypto';
import { initializeCA, initializeTLog, initializeTSA } from '@sigstore/mock';

type CA = Awaited<ReturnType<typeof initializeCA>>;
type TLog = Awaited<ReturnType<typeof initializeTLog>>;
type TSA = Awaited<ReturnType<typeof initializeTSA>>;

const OID_ISSUER_V2 = '1.3.6.1.4.1.57264.1.8';
const OID_SHA256 = '2.16.840.1.101.3.4.2.1';
const IN_TOTO = 'application/vnd.in-toto+json';

export interface MockSigstore {
  ca: CA;
  tlog: TLog;
  tsa: TSA;
  /**
   * The TSA's clock, set to a whole second before each timestamp: the mock writes a genTime of
   * 50 ms as ".05Z", which @sigstore/core's parser (three digits or none) rejects.
   */
  tsaClock: Date;
}

const ecKeys = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** A fresh CA, log and timestamp authority, each with its own key. */
export async function mockSigstore(): Promise<MockSigstore> {
  const tsaClock = new Date();
  return { ca: await initializeCA(ecKeys()), tlog: await initializeTLog('https://rekor.sigstore.mock', ecKeys()), tsa: await initializeTSA(ecKeys(), tsaClock), tsaClock };
}

const b64 = (b: Buffer): string => b.toString('base64');
const since = { start: '2020-01-01T00:00:00Z' };

/** trusted_root.json for `m`; `caChain` replaces the CA's chain (DER certificates, leaf-most first). */
export function trustedRoot(m: MockSigstore, caChain: Buffer[] = [m.ca.rootCertificate]): object {
  return {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [
      {
        baseUrl: 'https://rekor.sigstore.mock',
        hashAlgorithm: 'SHA2_256',
        publicKey: { rawBytes: b64(m.tlog.publicKey), keyDetails: 'PKIX_ECDSA_P256_SHA_256', validFor: since },
        logId: { keyId: b64(createHash('sha256').update(m.tlog.publicKey).digest()) },
      },
    ],
    certificateAuthorities: [{ subject: { organization: 'sigstore.mock', commonName: 'sigstore' }, uri: 'https://fulcio.sigstore.mock', certChain: { certificates: caChain.map((c) => ({ rawBytes: b64(c) })) }, validFor: since }],
    ctlogs: [],
    timestampAuthorities: [
      { subject: { organization: 'sigstore.mock', commonName: 'tsa' }, certChain: { certificates: [m.tsa.intCertificate, m.tsa.rootCertificate].map((c) => ({ rawBytes: b64(c) })) }, validFor: since },
    ],
  };
}

export interface KeylessSignOptions {
  identity: string;
  issuer: string;
  /** Log the signature in the mock Rekor (default true). */
  tlog?: boolean;
  /** Timestamp the signature with the mock TSA (default true). */
  tsa?: boolean;
  /** Extra certificates after the leaf: the bundle then names a chain (bundle v0.2). */
  chain?: Buffer[];
}

/** A keyless bundle (JSON) signing the image `digest` (sha256:…), as cosign 3 makes one. */
export async function signKeyless(m: MockSigstore, digest: string, o: KeylessSignOptions): Promise<Buffer> {
  const statement = { _type: 'https://in-toto.io/Statement/v1', subject: [{ name: 'image', digest: { sha256: digest.slice('sha256:'.length) } }], predicateType: 'https://sigstore.dev/cosign/sign/v1', predicate: {} };
  const payload = Buffer.from(JSON.stringify(statement));
  const keys = ecKeys();
  const pae = Buffer.concat([Buffer.from(`DSSEv1 ${IN_TOTO.length} ${IN_TOTO} ${payload.length} `), payload]);
  const sig = sign('sha256', pae, keys.privateKey);
  const cert = await m.ca.issueCertificate({
    publicKey: keys.publicKey.export({ type: 'spki', format: 'der' }),
    subjectAltName: o.identity,
    extensions: [{ oid: OID_ISSUER_V2, value: o.issuer }],
  });
  const envelope = { payload: b64(payload), payloadType: IN_TOTO, signatures: [{ sig: b64(sig), keyid: '' }] };
  const tlogEntries = o.tlog === false ? [] : [await logEntry(m.tlog, envelope, payload, sig, cert)];
  m.tsaClock.setTime(Math.floor(Date.now() / 1000) * 1000);
  const rfc3161Timestamps = o.tsa === false ? [] : [{ signedTimestamp: b64(await m.tsa.timestamp({ artifactHash: createHash('sha256').update(sig).digest(), hashAlgorithmOID: OID_SHA256, nonce: randomInt(1 << 30), policyOID: '1.2.3.4', certReq: false })) }];
  const material = o.chain ? { x509CertificateChain: { certificates: [cert, ...o.chain].map((c) => ({ rawBytes: b64(c) })) } } : { certificate: { rawBytes: b64(cert) } };
  const bundle = {
    mediaType: `application/vnd.dev.sigstore.bundle${o.chain ? '+json;version=0.2' : '.v0.3+json'}`,
    verificationMaterial: { ...material, tlogEntries, timestampVerificationData: { rfc3161Timestamps } },
    dsseEnvelope: envelope,
  };
  return Buffer.from(JSON.stringify(bundle));
}

const pem = (der: Buffer): string => `-----BEGIN CERTIFICATE-----\n${b64(der).replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;

/** A Rekor dsse v0.0.1 entry for the envelope, in the bundle's form (inclusion promise and proof). */
async function logEntry(tlog: TLog, envelope: object, payload: Buffer, sig: Buffer, cert: Buffer): Promise<object> {
  const body = {
    apiVersion: '0.0.1',
    kind: 'dsse',
    spec: {
      envelopeHash: { algorithm: 'sha256', value: createHash('sha256').update(JSON.stringify(envelope)).digest('hex') },
      payloadHash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') },
      signatures: [{ signature: b64(sig), verifier: b64(Buffer.from(pem(cert))) }],
    },
  };
  const [entry] = Object.values(await tlog.log(body)) as {
    body: string;
    integratedTime: number;
    logID: string;
    logIndex: number;
    verification: { signedEntryTimestamp: string; inclusionProof: { logIndex: number; treeSize: number; rootHash: string; hashes: string[]; checkpoint: string } };
  }[];
  const proof = entry!.verification.inclusionProof;
  return {
    logIndex: String(entry!.logIndex),
    logId: { keyId: b64(Buffer.from(entry!.logID, 'hex')) },
    kindVersion: { kind: 'dsse', version: '0.0.1' },
    integratedTime: String(entry!.integratedTime),
    inclusionPromise: { signedEntryTimestamp: entry!.verification.signedEntryTimestamp },
    inclusionProof: { logIndex: String(proof.logIndex), rootHash: b64(Buffer.from(proof.rootHash, 'hex')), treeSize: String(proof.treeSize), hashes: proof.hashes, checkpoint: { envelope: proof.checkpoint } },
    canonicalizedBody: entry!.body,
  };
}
