import { useId, useState, type FormEvent } from 'react';
import { nodeInputSchema } from '../../shared/contract';
import { NODE_DEFAULTS, type ErrorInfo, type NodeDef, type NodeInput } from '../../shared/domain';
import { Modal } from './Modal';

type Fields = Record<
  'name' | 'host' | 'port' | 'user' | 'identity' | 'knownHosts' | 'socket' | 'imagesDir' | 'namespace',
  string
>;

const EMPTY: Fields = {
  name: '',
  host: '',
  port: '',
  user: '',
  identity: '',
  knownHosts: '',
  socket: '',
  imagesDir: '',
  namespace: '',
};

function fromNode(n: NodeDef): Fields {
  return {
    name: n.name,
    host: n.host,
    port: String(n.port),
    user: n.user,
    identity: n.identity ?? '',
    knownHosts: n.knownHosts ?? '',
    socket: n.socket,
    imagesDir: n.imagesDir,
    namespace: n.namespace,
  };
}

/** Form fields → NodeInput, leaving out empty optional fields so the core applies defaults. */
export function toNodeInput(f: Fields): unknown {
  const out: Record<string, unknown> = { name: f.name.trim(), host: f.host.trim() };
  const port = f.port.trim();
  if (port) out['port'] = /^\d+$/.test(port) ? Number(port) : port;
  for (const key of ['user', 'identity', 'knownHosts', 'socket', 'imagesDir', 'namespace'] as const) {
    const v = f[key].trim();
    if (v) out[key] = v;
  }
  return out;
}

export function NodeForm(props: {
  initial?: NodeDef;
  onSubmit(input: NodeInput): Promise<ErrorInfo | null>;
  onClose(): void;
}) {
  const editing = props.initial !== undefined;
  const [fields, setFields] = useState<Fields>(props.initial ? fromNode(props.initial) : EMPTY);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<keyof Fields, string>>>({});
  const [error, setError] = useState<ErrorInfo | null>(null);
  const [busy, setBusy] = useState(false);
  const formId = useId();
  const advancedSet = Boolean(
    props.initial &&
      (props.initial.socket !== NODE_DEFAULTS.socket ||
        props.initial.imagesDir !== NODE_DEFAULTS.imagesDir ||
        props.initial.namespace !== NODE_DEFAULTS.namespace),
  );

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const parsed = nodeInputSchema.safeParse(toNodeInput(fields));
    if (!parsed.success) {
      const errs: Partial<Record<keyof Fields, string>> = {};
      for (const issue of parsed.error.issues) {
        const key = issue.path[0];
        if (typeof key === 'string' && key in EMPTY && !errs[key as keyof Fields]) {
          errs[key as keyof Fields] = issue.message;
        }
      }
      setFieldErrors(errs);
      return;
    }
    setFieldErrors({});
    setBusy(true);
    const err = await props.onSubmit(parsed.data as NodeInput);
    setBusy(false);
    if (err) setError(err);
    else props.onClose();
  };

  const field = (
    key: keyof Fields,
    label: string,
    opts: { placeholder?: string; help?: string; required?: boolean; inputMode?: 'numeric'; mono?: boolean } = {},
  ) => {
    const id = `${formId}-${key}`;
    const err = fieldErrors[key];
    const helpId = opts.help ? `${id}-help` : undefined;
    const errId = err ? `${id}-err` : undefined;
    return (
      <div className={`field field-${key}`}>
        <label htmlFor={id}>
          {label}
          {opts.required ? <span className="req" aria-hidden="true"> *</span> : null}
        </label>
        <input
          id={id}
          name={key}
          className={opts.mono ? 'mono' : undefined}
          value={fields[key]}
          placeholder={opts.placeholder}
          required={opts.required}
          inputMode={opts.inputMode}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={err ? true : undefined}
          aria-describedby={[helpId, errId].filter(Boolean).join(' ') || undefined}
          onChange={(e) => setFields((f) => ({ ...f, [key]: e.target.value }))}
        />
        {opts.help ? (
          <p id={helpId} className="help">
            {opts.help}
          </p>
        ) : null}
        {err ? (
          <p id={errId} className="field-error">
            {err}
          </p>
        ) : null}
      </div>
    );
  };

  return (
    <Modal title={editing ? `Edit node ${props.initial?.name}` : 'Add node'} onClose={props.onClose} testId="node-form">
      <form onSubmit={submit} noValidate>
        <div className="form-grid">
          {field('name', 'Name', { required: true, placeholder: 'edge-01', help: 'Letters, digits, ".", "_" and "-".' })}
          {field('host', 'Host', { required: true, placeholder: '10.0.0.12 or node1.site.lan' })}
          {field('port', 'Port', { placeholder: String(NODE_DEFAULTS.port), inputMode: 'numeric' })}
          {field('user', 'User', { placeholder: NODE_DEFAULTS.user })}
          {field('identity', 'Identity file', {
            placeholder: '~/.ssh/id_ed25519',
            help: 'Private key file. Leave empty to use ssh-agent.',
            mono: true,
          })}
          {field('knownHosts', 'known_hosts file', {
            placeholder: '~/.ssh/known_hosts',
            help: 'Where the host key is checked and recorded.',
            mono: true,
          })}
        </div>
        <details className="advanced" open={advancedSet}>
          <summary>Advanced</summary>
          <div className="form-grid">
            {field('socket', 'containerd socket', { placeholder: NODE_DEFAULTS.socket, mono: true })}
            {field('imagesDir', 'Images directory', { placeholder: NODE_DEFAULTS.imagesDir, mono: true })}
            {field('namespace', 'Namespace', { placeholder: NODE_DEFAULTS.namespace, mono: true })}
          </div>
        </details>
        {error ? (
          <div className="callout callout-error" role="alert">
            <strong>{error.message}</strong>
            {error.hint ? <p>{error.hint}</p> : null}
          </div>
        ) : null}
        <div className="modal-actions">
          <button type="button" className="btn" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Saving…' : editing ? 'Save changes' : 'Add node'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
