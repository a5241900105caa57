// A file handed to the browser to save (the fleet report, a pin set under `holdfast serve`): a
// Blob URL and an <a download>, allowed by the CSP (no navigation, nothing leaves the machine).

export function download(file: { filename: string; mime: string; content: string }): void {
  const url = URL.createObjectURL(new Blob([file.content], { type: file.mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = file.filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
