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

  const field = (key: keyof Fields, label: string, opts: FieldOptions = {}) => (
    <TextField id={`${formId}-${key}`} name={key} label={label} value={fields[key]} error={fieldErrors[key]} opts={opts} onChange={(v) => setFields((f) => ({ ...f, [key]: v }))} />
  );

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
          <AuthField id={`${formId}-auth`} value={fields.auth} onChange={(auth) => setFields((f) => ({ ...f, auth }))} />
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
            <JumpField id={`${formId}-jump`} value={fields.jump} choices={jumpChoices} onChange={(jump) => setFields((f) => ({ ...f, jump }))} />
            <SudoField id={`${formId}-sudo`} checked={fields.sudo === 'true'} onChange={(on) => setFields((f) => ({ ...f, sudo: on ? 'true' : '' }))} />
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

interface FieldOptions {
  placeholder?: string;
  help?: string;
  required?: boolean;
  inputMode?: 'numeric';
  mono?: boolean;
  list?: string;
}

/** One text field: its label, its help and its error, tied to the input for screen readers. */
function TextField(props: { id: string; name: keyof Fields; label: string; value: string; error: string | undefined; opts: FieldOptions; onChange(value: string): void }) {
  const { id, opts, error: err } = props;
  const helpId = opts.help ? `${id}-help` : undefined;
  const errId = err ? `${id}-err` : undefined;
  return (
    <div className={`field field-${props.name}`}>
      <label htmlFor={id}>
        {props.label}
        {opts.required ? <span className="req" aria-hidden="true"> *</span> : null}
      </label>
      <input
        id={id}
        name={props.name}
        className={opts.mono ? 'mono' : undefined}
        value={props.value}
        placeholder={opts.placeholder}
        required={opts.required}
        inputMode={opts.inputMode}
        list={opts.list}
        autoComplete="off"
        spellCheck={false}
        aria-invalid={err ? true : undefined}
        aria-describedby={[helpId, errId].filter(Boolean).join(' ') || undefined}
        onChange={(e) => props.onChange(e.target.value)}
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
}

/** How Holdfast logs in, with what the choice means. */
function AuthField(props: { id: string; value: string; onChange(value: string): void }) {
  const auth = AUTH_OPTIONS.find((a) => a.value === props.value) ?? AUTH_OPTIONS[0]!;
  return (
    <div className="field field-auth">
      <label htmlFor={props.id}>Authentication</label>
      <select id={props.id} name="auth" value={props.value} aria-describedby={`${props.id}-help`} onChange={(e) => props.onChange(e.target.value)}>
        {AUTH_OPTIONS.map((a) => (
          <option key={a.value} value={a.value}>
            {a.label}
          </option>
        ))}
      </select>
      <p id={`${props.id}-help`} className="help">
        {auth.help}
      </p>
    </div>
  );
}

/** The configured node to reach this one through, or none. */
function JumpField(props: { id: string; value: string; choices: readonly NodeDef[]; onChange(value: string): void }) {
  return (
    <div className="field field-jump">
      <label htmlFor={props.id}>Jump host</label>
      <select id={props.id} name="jump" value={props.value} aria-describedby={`${props.id}-help`} onChange={(e) => props.onChange(e.target.value)}>
        <option value="">None (connect directly)</option>
        {props.choices.map((n) => (
          <option key={n.name} value={n.name}>
            {n.name} ({n.user}@{n.host})
          </option>
        ))}
      </select>
      <p id={`${props.id}-help`} className="help">
        Reach this node through another configured node (like ssh -J), e.g. a site gateway.
      </p>
    </div>
  );
}

function SudoField(props: { id: string; checked: boolean; onChange(on: boolean): void }) {
  return (
    <div className="field field-sudo">
      <label className="check">
        <input type="checkbox" name="sudo" checked={props.checked} aria-describedby={`${props.id}-help`} onChange={(e) => props.onChange(e.target.checked)} />
        Use sudo
      </label>
      <p id={`${props.id}-help`} className="help">
        For a non-root user: reach containerd and the images dir through sudo -n (needs passwordless sudo for that user).
      </p>
    </div>
  );
}
