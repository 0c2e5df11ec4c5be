// The hosted page's stylesheet and script, served from our origin as files (the page's policy allows 'self' and
// no inline code). Mobile first: one column, 48 px touch targets, readable at 360 px. The script only improves
// the plain forms (a preview, the type and size checked before upload); without it the page works the same.
import type Router from '@koa/router';
import { neutralAccent } from '../domain/branding';
import { hostedAssetPaths } from '../domain/hosted-page';

export const hostedStylesheet = `:root{--accent:${neutralAccent};--on-accent:#ffffff;--accent-text:${neutralAccent};--ink:#1f2328;--muted:#4b5563;--line:#d0d7de;--bg:#f6f8fa;--ok:#116329;--bad:#a40e26}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
.brand{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;padding:.75rem 1rem;background:#fff;border-bottom:4px solid var(--accent)}
.logo{max-height:40px;max-width:160px;width:auto;height:auto}
.brand-name{font-weight:700;font-size:1.1rem}
.languages{display:flex;gap:.25rem}
.languages a{display:inline-flex;align-items:center;min-height:44px;padding:0 .6rem;border-radius:6px;color:var(--accent-text);text-decoration:underline}
.languages a[aria-current]{font-weight:700;text-decoration:none;outline:2px solid var(--accent-text);outline-offset:-2px}
main{max-width:40rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
h3{font-size:1.05rem;margin:0 0 .25rem}
.who{margin:.25rem 0 1rem;color:var(--muted)}
.who strong{color:var(--ink)}
[role=status]{padding:.75rem 1rem;border-radius:8px;background:#dafbe1;color:var(--ok);font-weight:600}
.error{color:var(--bad)}
[role=alert]{padding:.75rem 1rem;border-radius:8px;background:#ffebe9;font-weight:600}
.progress label{font-weight:600}
progress{display:block;width:100%;height:12px;accent-color:var(--accent)}
.steps{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
.step{background:#fff;border:1px solid var(--line);border-radius:12px;padding:1rem}
.state-rejected{border-color:var(--bad);border-width:2px}
.badge{display:inline-block;padding:.1rem .6rem;border-radius:999px;background:var(--bg);border:1px solid var(--line);font-size:.9rem}
.state-accepted .badge,.state-uploaded .badge,.state-in_review .badge{color:var(--ok);border-color:var(--ok)}
.state-rejected .badge{color:var(--bad);border-color:var(--bad)}
.tag{font-size:.85rem;font-weight:400;color:var(--muted)}
.hint,.help,.received{color:var(--muted);margin:.25rem 0}
.reason{border-left:4px solid var(--bad);padding:.25rem .75rem;margin:.5rem 0;background:#fff5f5}
.reason p{margin:.25rem 0}
form{display:grid;gap:.6rem;margin-top:.75rem}
fieldset{border:1px solid var(--line);border-radius:8px;margin:0;padding:.5rem .75rem}
legend{font-weight:600;padding:0 .25rem}
.choice{display:flex;align-items:center;gap:.6rem;min-height:48px;cursor:pointer}
.choice input{width:22px;height:22px;margin:0;accent-color:var(--accent)}
.file{font-weight:600}
input[type=file]{min-height:48px;width:100%;padding:.5rem;border:2px dashed var(--line);border-radius:8px;background:#fff;font-size:1rem}
button{font:inherit;min-height:48px;padding:.6rem 1.2rem;border-radius:8px;border:2px solid var(--accent);cursor:pointer}
.primary{width:100%;background:var(--accent);color:var(--on-accent);font-weight:700}
button:disabled{opacity:.7;cursor:progress}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--ink);outline-offset:2px}
.preview img{display:block;max-width:100%;max-height:240px;border-radius:8px;border:1px solid var(--line)}
.preview p{margin:.25rem 0;word-break:break-all}
.submit,.next{background:#fff;border:1px solid var(--line);border-radius:12px;padding:0 1rem 1rem;margin-top:1.5rem}
.expiry{color:var(--muted);font-size:.95rem}
@media (min-width:40rem){.primary{width:auto}}
`;

export const hostedScript = `'use strict';
(function () {
  var forms = document.querySelectorAll('form.upload');
  Array.prototype.forEach.call(forms, function (form) {
    var input = form.querySelector('input[type=file]');
    var preview = form.querySelector('.preview');
    var button = form.querySelector('button[type=submit]');
    var max = Number(form.getAttribute('data-max-bytes'));
    var types = (form.getAttribute('data-types') || '').split(',');
    input.addEventListener('change', function () {
      while (preview.firstChild) preview.removeChild(preview.firstChild);
      preview.hidden = true;
      input.setCustomValidity('');
      var file = input.files && input.files[0];
      if (!file) return;
      var problem = '';
      // Some phones give no type for HEIC pictures: the server decides by the bytes then.
      if (file.size === 0 || (file.type && types.indexOf(file.type) < 0)) problem = form.getAttribute('data-msg-type');
      else if (file.size > max) problem = form.getAttribute('data-msg-too-large');
      if (problem) {
        input.setCustomValidity(problem);
        var message = document.createElement('p');
        message.className = 'error';
        message.setAttribute('role', 'alert');
        message.textContent = problem;
        preview.appendChild(message);
        preview.hidden = false;
        return;
      }
      if (file.type.indexOf('image/') === 0 && file.type !== 'image/heic' && file.type !== 'image/heif') {
        var image = document.createElement('img');
        image.alt = form.getAttribute('data-msg-preview');
        image.src = URL.createObjectURL(file);
        image.addEventListener('load', function () { URL.revokeObjectURL(image.src); });
        preview.appendChild(image);
      }
      var name = document.createElement('p');
      name.textContent = file.name + ' (' + Math.max(1, Math.round(file.size / 1024)) + ' KB)';
      preview.appendChild(name);
      preview.hidden = false;
    });
    form.addEventListener('submit', function () {
      button.disabled = true;
      button.textContent = form.getAttribute('data-msg-sending');
    });
  });
})();
`;

/** Mounted beside /docs: static, no customer data, so they may be cached (unlike every API answer). */
export function mountHostedAssets(router: Router): void {
  const serve = (path: string, type: string, body: string) =>
    router.get(path, (ctx) => {
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = body;
    });
  serve(hostedAssetPaths.css, 'text/css; charset=utf-8', hostedStylesheet);
  serve(hostedAssetPaths.js, 'application/javascript; charset=utf-8', hostedScript);
}
