// How we log in: the auth plan (identity file, ssh-agent, password or keyboard-interactive) chosen
// before any byte goes on the wire, the identity file read and decrypted (asking for its passphrase),
// ssh2's authHandler that walks the plan asking a person for secrets, and the AUTH_FAILED wording.
// Separate from connect.ts because credentials are their own concern with their own promise:
// secrets never reach a message, a log or ssh2's config — only file names and method names do.
import { promises as fsp } from 'node:fs';
// ssh2 is CommonJS: under Node's ESM loader only some of its exports are detectable as named
// exports (`utils` is not), so take everything from the default export.
import ssh2 from 'ssh2';
import type { AuthHandlerMiddleware, ParsedKey } from 'ssh2';
import { HoldfastError } from '../errors';
import { CREDENTIAL_ATTEMPTS, type CredentialsProvider } from './credentials';
import { errnoCode } from './errors';

/** The part of an SSH target that says who logs in where, and with what (SshTarget extends it). */
export interface AuthTarget {
  host: string;
  port: number;
  user: string;
  /** Private key file; without it, ssh-agent via $SSH_AUTH_SOCK. */
  identity?: string;
  /** Passphrase of an encrypted identity file (else asked through credentials.passphrase). */
  passphrase?: string;
  /** publickey (default: identity file, else ssh-agent), password, or keyboard-interactive. */
  auth?: 'publickey' | 'password' | 'keyboard-interactive';
  /** Asks a person for passphrases, passwords and keyboard-interactive answers. */
  credentials?: CredentialsProvider;
}

export type AuthPlan =
  | { kind: 'key'; key: ParsedKey; describe: string; file: string; encrypted: boolean }
  | { kind: 'agent'; agent: string; describe: string }
  | { kind: 'password'; describe: string }
  | { kind: 'keyboard-interactive'; describe: string };

/** What authentication learnt while it ran; the connection reads it to word a failure. */
export interface AuthState {
  /** The methods the server said it accepts, once it said so. */
  serverMethods: string[] | null;
  /** Set when a person cancelled a prompt: the failure to report instead of "authentication failed". */
  cancelled: HoldfastError | null;
  /** authHandler rounds so far. */
  attempts: number;
}

export function newAuthState(): AuthState {
  return { serverMethods: null, cancelled: null, attempts: 0 };
}

export function cancelled(what: string, err: unknown): HoldfastError {
  // Never the callback's message: it is the UI's, and we promise nothing about what it holds.
  void err;
  return new HoldfastError('AUTH_FAILED', `${what} was cancelled.`, { hint: 'Connect again and give it when asked.' });
}

async function readIdentity(target: AuthTarget): Promise<{ key: ParsedKey; encrypted: boolean }> {
  const file = target.identity!;
  let data: Buffer;
  try {
    data = await fsp.readFile(file);
  } catch (err) {
    const code = errnoCode(err);
    throw new HoldfastError(
      'AUTH_FAILED',
      `Cannot read the identity file ${file}${code === 'ENOENT' ? ': it does not exist' : code === 'EACCES' ? ': permission denied' : ''}.`,
      { hint: 'Point the node at a readable private key file, or leave identity empty to use ssh-agent.', cause: err },
    );
  }
  let passphrase = target.passphrase;
  const ask = target.credentials?.passphrase;
  for (let attempt = 1; ; attempt++) {
    const parsed = ssh2.utils.parseKey(data, passphrase);
    if (!(parsed instanceof Error)) {
      const key = Array.isArray(parsed) ? parsed[0] : parsed;
      if (!key || !key.isPrivateKey()) {
        throw new HoldfastError('AUTH_FAILED', `The identity file ${file} holds a public key, not a private key.`, {
          hint: 'Point identity at the private half (the file without .pub).',
        });
      }
      return { key, encrypted: passphrase !== undefined };
    }
    const m = parsed.message;
    const missing = /no passphrase given/i.test(m);
    const wrong = /bad passphrase|integrity check failed/i.test(m);
    if ((missing || wrong) && ask && attempt <= CREDENTIAL_ATTEMPTS) {
      try {
        passphrase = await ask.call(target.credentials, file);
      } catch (err) {
        throw cancelled(`The passphrase for ${file}`, err);
      }
      continue;
    }
    if (missing) {
      throw new HoldfastError('AUTH_FAILED', `The identity file ${file} is encrypted and no passphrase was given.`, {
        hint: 'Provide its passphrase, or load the key into ssh-agent (ssh-add) and leave identity empty.',
      });
    }
    if (wrong) {
      throw new HoldfastError('AUTH_FAILED', `The passphrase for the identity file ${file} is wrong.`, {
        hint: 'Check the passphrase (ssh-keygen -y -f <file> asks for it and shows whether it is right).',
      });
    }
    throw new HoldfastError('AUTH_FAILED', `The identity file ${file} is not a private key ssh2 can read (${m}).`, {
      hint: 'Use an OpenSSH or PEM private key (ed25519, ECDSA or RSA).',
    });
  }
}

export async function planAuth(target: AuthTarget): Promise<AuthPlan> {
  const who = `${target.user}@${target.host}`;
  if (target.auth === 'password' || target.auth === 'keyboard-interactive') {
    const c = target.credentials;
    if (!c?.password && !c?.keyboardInteractive) {
      throw new HoldfastError('AUTH_FAILED', `${who} is set to log in with a ${target.auth === 'password' ? 'password' : 'keyboard-interactive prompt'}, but there is no way to ask for it here.`, {
        hint: 'Run the command in a terminal (the CLI asks without echo), or use key authentication.',
      });
    }
    return { kind: target.auth, describe: target.auth };
  }
  if (target.identity) {
    // Hand ssh2 the parsed key: the (slow, bcrypt) passphrase KDF runs once, and the passphrase
    // itself never reaches ssh2's config.
    const { key, encrypted } = await readIdentity(target);
    return { kind: 'key', key, describe: `publickey (${target.identity})`, file: target.identity, encrypted };
  }
  const agent = process.env.SSH_AUTH_SOCK;
  if (agent) return { kind: 'agent', agent, describe: 'publickey via ssh-agent' };
  throw new HoldfastError('AUTH_FAILED', `No way to authenticate as ${who}: no identity file is set and no ssh-agent is running (SSH_AUTH_SOCK is not set).`, {
    hint: 'Set an identity file for the node, or start ssh-agent and ssh-add your key.',
  });
}

/**
 * ssh2's authHandler for `auth`: one try for a key or the agent, up to CREDENTIAL_ATTEMPTS for
 * passwords and keyboard-interactive answers. `asking` runs a prompt with the connection deadline
 * paused. Fills `state` as it goes.
 */
export function authHandler(
  target: AuthTarget,
  auth: AuthPlan,
  state: AuthState,
  asking: <T>(fn: () => Promise<T>) => Promise<T>,
): AuthHandlerMiddleware {
  const { user, host, port } = target;
  return (methodsLeft, _partial, next) => {
    if (methodsLeft) state.serverMethods = methodsLeft;
    const done = () => (next as (choice: unknown) => void)(false); // `false` ends authentication
    state.attempts++;
    if (state.cancelled) return done();
    if (auth.kind === 'key') {
      return state.attempts === 1 ? next({ type: 'publickey', username: user, key: auth.key }) : done();
    }
    if (auth.kind === 'agent') {
      return state.attempts === 1 ? next({ type: 'agent', username: user, agent: auth.agent }) : done();
    }
    if (state.attempts > CREDENTIAL_ATTEMPTS) return done();
    // password: use the password method when the server offers it (or has not said yet), else
    // its keyboard-interactive prompt, as ssh does with PAM-only servers.
    const serverMethods = state.serverMethods;
    const offered = (m: string) => !serverMethods || serverMethods.includes(m);
    const c = target.credentials!;
    if (auth.kind === 'password' && offered('password') && c.password) {
      void asking(() => c.password!.call(c, user, host)).then(
        (password) => next({ type: 'password', username: user, password }),
        (err: unknown) => {
          state.cancelled = cancelled(`The password for ${user}@${host}`, err);
          done();
        },
      );
      return;
    }
    if (!offered('keyboard-interactive')) return done();
    return next({
      type: 'keyboard-interactive',
      username: user,
      prompt: (name, instructions, _lang, prompts, finish) => {
        const list = prompts.map((p) => ({ prompt: p.prompt, echo: Boolean(p.echo) }));
        const answer = (): Promise<string[]> => {
          if (c.keyboardInteractive) return c.keyboardInteractive.call(c, list, { user, host, port, name, instructions });
          if (c.password && list.length === 1 && !list[0]!.echo) return c.password.call(c, user, host).then((p) => [p]);
          return Promise.reject(new Error('no answer for these prompts'));
        };
        void asking(answer).then(
          (answers) => finish(Array.isArray(answers) ? answers.map(String) : []),
          (err: unknown) => {
            state.cancelled = cancelled(`Login to ${user}@${host}`, err);
            // As many (empty) answers as questions: anything else is a protocol error to sshd.
            finish(list.map(() => ''));
          },
        );
      },
    });
  };
}

/** The server refused every method we tried (ssh2 'error' of level client-authentication). */
export function authFailedError(
  user: string,
  where: string,
  auth: AuthPlan,
  state: AuthState,
  agentError: Error | null,
  err: Error,
): HoldfastError {
  const serverMethods = state.serverMethods;
  const allowed = serverMethods && serverMethods.length ? `; the server accepts: ${serverMethods.join(', ')}` : '';
  const agentNote = agentError ? ` (ssh-agent: ${agentError.message})` : '';
  return new HoldfastError('AUTH_FAILED', `Authentication failed for user ${user} at ${where}: tried ${auth.describe}${agentNote}${allowed}.`, {
    hint:
      auth.kind === 'key'
        ? `Check that the matching public key is in ~${user}/.ssh/authorized_keys on the node and that the user name is right.`
        : auth.kind === 'agent'
          ? `Check that ssh-agent holds a key authorised for ${user} on the node (ssh-add -l), or set an identity file.`
          : `Check the user name and the ${auth.kind === 'password' ? 'password' : 'answers'}, and that the node's sshd allows ${auth.kind} authentication.`,
    cause: err,
  });
}
