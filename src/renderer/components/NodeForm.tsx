import { useId, useState, type FormEvent } from 'react';
import { nodeInputSchema } from '../../shared/contract';
import type { ErrorInfo } from '../../shared/domain/errors';
import { NODE_DEFAULTS, type NodeDef, type NodeInput } from '../../shared/domain/nodes';
import { ErrorNote } from './ErrorCallout';
import { Modal } from './Modal';

type Fields = Record<
  'name' | 'host' | 'port' | 'user' | 'identity' | 'knownHosts' | 'socket' | 'imagesDir' | 'namespace' | 'group' | 'jump' | 'auth' | 'sudo' | 'k8sNode',
  string
>;

const AUTH_OPTIONS: { value: NonNullable<NodeDef['auth']>; label: string; help: string }[] = [
  { value: 'publickey', label: 'Key or ssh-agent', help: 'The identity file above (its passphrase is asked when it has one), else ssh-agent.' },
  { value: 'password', label: 'Password', help: 'Asked in a dialog at each connection; never stored.' },
  {
    value: 'keyboard-interactive',
    label: 'Keyboard-interactive',
    help: "The node's own prompts (e.g. password and a one-time code), asked in a dialog at each connection; never stored.",
  },
];

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
  group: '',
  jump: '',
  auth: 'publickey',
  sudo: '',
  k8sNode: '',
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
    group: n.group ?? '',
    jump: n.jump ?? '',
    auth: n.auth ?? 'publickey',
    sudo: n.sudo ? 'true' : '',
    k8sNode: n.k8sNode ?? '',
  };
}

/** Form fields → NodeInput, leaving out empty optional fields so the core applies defaults. */
export function toNodeInput(f: Fields): unknown {
  const out: Record<string, unknown> = { name: f.name.trim(), host: f.host.trim() };
  const port = f.port.trim();
  if (port) out['port'] = /^\d+$/.test(port) ? Number(port) : port;
  for (const key of ['user', 'identity', 'knownHosts', 'socket', 'imagesDir', 'namespace', 'group', 'jump', 'k8sNode'] as const) {
    const v = (f[key] ?? '').trim();
    if (v) out[key] = v;
  }
  if (f.sudo === 'true') out['sudo'] = true;
  if (f.auth && f.auth !== 'publickey') out['auth'] = f.auth;
  return out;
}

export function NodeForm(props: {
  initial?: NodeDef;
  /** Every configured node (the jump host choices). */
  nodes?: readonly NodeDef[];
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
        props.initial.namespace !== NODE_DEFAULTS.namespace ||
        props.initial.sudo ||
        props.initial.jump ||
        props.initial.k8sNode),
  );
  const jumpChoices = (props.nodes ?? []).filter((n) => n.name !== props.initial?.name && n.name !== fields.name.trim());
  const groupChoices = [...new Set((props.nodes ?? []).map((n) => n.group).filter((g): g is string => Boolean(g)))].sort();
  const auth = AUTH_OPTIONS.find((a) => a.value === fields.auth) ?? AUTH_OPTIONS[0]!;

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
    opts: { placeholder?: string; help?: string; required?: boolean; inputMode?: 'numeric'; mono?: boolean; list?: string } = {},
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
          list={opts.list}
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
          {field('group', 'Group', {
            placeholder: 'site-north',
            help: 'Site or group: the sidebar groups nodes by it and the fleet matrix can inspect one group.',
            list: `${formId}-groups`,
          })}
          <div className="field field-auth">
            <label htmlFor={`${formId}-auth`}>Authentication</label>
            <select
              id={`${formId}-auth`}
              name="auth"
              value={fields.auth}
              aria-describedby={`${formId}-auth-help`}
              onChange={(e) => setFields((f) => ({ ...f, auth: e.target.value }))}
            >
              {AUTH_OPTIONS.map((a) => (
                <option key={a.value} value={a.value}>
                  {a.label}
                </option>
              ))}
            </select>
            <p id={`${formId}-auth-help`} className="help">
              {auth.help}
            </p>
          </div>
        </div>
        <datalist id={`${formId}-groups`}>
          {groupChoices.map((g) => (
            <option key={g} value={g} />
          ))}
        </datalist>
        <details className="advanced" open={advancedSet}>
          <summary>Advanced</summary>
          <div className="form-grid">
            {field('socket', 'containerd socket', { placeholder: NODE_DEFAULTS.socket, mono: true })}
            {field('imagesDir', 'Images directory', { placeholder: NODE_DEFAULTS.imagesDir, mono: true })}
            {field('namespace', 'Namespace', { placeholder: NODE_DEFAULTS.namespace, mono: true })}
            {field('k8sNode', 'Kubernetes Node name', {
              placeholder: fields.name.trim() || 'as in kubectl get nodes',
              help: 'Only when the cluster names this node otherwise and lists none of its addresses: the needs bound to that Node then count here.',
              mono: true,
            })}
            <div className="field field-jump">
              <label htmlFor={`${formId}-jump`}>Jump host</label>
              <select
                id={`${formId}-jump`}
                name="jump"
                value={fields.jump}
                aria-describedby={`${formId}-jump-help`}
                onChange={(e) => setFields((f) => ({ ...f, jump: e.target.value }))}
              >
                <option value="">None (connect directly)</option>
                {jumpChoices.map((n) => (
                  <option key={n.name} value={n.name}>
                    {n.name} ({n.user}@{n.host})
                  </option>
                ))}
              </select>
              <p id={`${formId}-jump-help`} className="help">
                Reach this node through another configured node (like ssh -J), e.g. a site gateway.
              </p>
            </div>
            <div className="field field-sudo">
              <label className="check">
                <input
                  type="checkbox"
                  name="sudo"
                  checked={fields.sudo === 'true'}
                  aria-describedby={`${formId}-sudo-help`}
                  onChange={(e) => setFields((f) => ({ ...f, sudo: e.target.checked ? 'true' : '' }))}
                />
                Use sudo
              </label>
              <p id={`${formId}-sudo-help`} className="help">
                For a non-root user: reach containerd and the images dir through sudo -n (needs passwordless sudo for that user).
              </p>
            </div>
          </div>
        </details>
        <ErrorNote error={error} />
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
