// The imports the wizard could not start (refused before any job existed), shown by the nodes,
// run and summary steps alike; its own file so those steps share it without importing each other.
import { useApp } from '../../context';
import { basename } from '../../model/paths';
import { ErrorCallout } from '../ErrorCallout';

export function StartErrors() {
  const errors = useApp((s) => s.wizard.startErrors);
  return (
    <>
      {errors.map((e) => (
        <ErrorCallout key={e.path} error={e.error} title={`${basename(e.path)} was not started`} testId="start-error" />
      ))}
    </>
  );
}
