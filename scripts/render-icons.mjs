#!/usr/bin/env node
// Renders build/icon.svg into the icons electron-builder packs: build/icons/NxN.png (Linux's
// hicolor set, 16…512), build/icon.png (1024), build/icon.ico (Windows, NSIS) and
// build/icon.icns (macOS, dmg). The outputs are committed; run this only after changing the SVG:
//   node scripts/render-icons.mjs        (needs rsvg-convert: apt-get install librsvg2-bin)
//
// .ico and .icns are written here rather than converted by electron-builder at packaging time,
// so a release build needs no image tool and gives the same bytes on every OS. Both containers
// hold PNG payloads as-is (ICO since Windows Vista, ICNS since OS X 10.7), so no image library is
// needed: just their headers.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const build = path.resolve(import.meta.dirname, '..', 'build');
const svg = path.join(build, 'icon.svg');
const icons = path.join(build, 'icons');
mkdirSync(icons, { recursive: true });

const png = (size) => execFileSync('rsvg-convert', ['-w', String(size), '-h', String(size), svg]);
const sizes = [16, 24, 32, 48, 64, 128, 256, 512];
const rendered = new Map(sizes.concat([1024]).map((s) => [s, png(s)]));
for (const s of sizes) writeFileSync(path.join(icons, `${s}x${s}.png`), rendered.get(s));
writeFileSync(path.join(build, 'icon.png'), rendered.get(1024));

// ICO: ICONDIR (6 bytes), one 16-byte ICONDIRENTRY per image, then the PNGs. A width/height byte
// of 0 means 256.
function ico(list) {
  const head = Buffer.alloc(6 + 16 * list.length);
  head.writeUInt16LE(0, 0);
  head.writeUInt16LE(1, 2); // type: icon
  head.writeUInt16LE(list.length, 4);
  let offset = head.length;
  list.forEach(([size, data], i) => {
    const e = 6 + 16 * i;
    head.writeUInt8(size >= 256 ? 0 : size, e);
    head.writeUInt8(size >= 256 ? 0 : size, e + 1);
    head.writeUInt16LE(1, e + 4); // colour planes
    head.writeUInt16LE(32, e + 6); // bits per pixel
    head.writeUInt32LE(data.length, e + 8);
    head.writeUInt32LE(offset, e + 12);
    offset += data.length;
  });
  return Buffer.concat([head, ...list.map(([, d]) => d)]);
}
writeFileSync(path.join(build, 'icon.ico'), ico([16, 24, 32, 48, 64, 128, 256].map((s) => [s, rendered.get(s)])));

// ICNS: "icns" + total length, then (OSType, length incl. 8-byte header, PNG) per element.
// The PNG-capable types: icp4 16, icp5 32, icp6 64, ic07 128, ic08 256, ic09 512, ic10 1024
// (512@2x), ic11 32 (16@2x), ic12 64 (32@2x), ic13 256 (128@2x), ic14 512 (256@2x).
const ICNS = [['icp4', 16], ['icp5', 32], ['icp6', 64], ['ic07', 128], ['ic08', 256], ['ic09', 512], ['ic10', 1024], ['ic11', 32], ['ic12', 64], ['ic13', 256], ['ic14', 512]];
function icns() {
  const parts = ICNS.map(([type, size]) => {
    const data = rendered.get(size) ?? png(size);
    const h = Buffer.alloc(8);
    h.write(type, 0, 'latin1');
    h.writeUInt32BE(8 + data.length, 4);
    return Buffer.concat([h, data]);
  });
  const body = Buffer.concat(parts);
  const h = Buffer.alloc(8);
  h.write('icns', 0, 'latin1');
  h.writeUInt32BE(8 + body.length, 4);
  return Buffer.concat([h, body]);
}
writeFileSync(path.join(build, 'icon.icns'), icns());

console.log(`icons written to ${path.relative(process.cwd(), build)}: ${sizes.map((s) => `${s}x${s}`).join(' ')}, icon.png, icon.ico, icon.icns`);
// Sanity: every file starts as its format says.
if (readFileSync(path.join(build, 'icon.icns')).subarray(0, 4).toString('latin1') !== 'icns') throw new Error('icns header');
