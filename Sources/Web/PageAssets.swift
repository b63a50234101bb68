/// The page, its script and its style, built into the program so the page is the one this
/// node was built with. No inline script or style anywhere (the policy forbids both), and every
/// stranger's string reaches the page through `textContent`, never `innerHTML`.
enum PageAssets {
    /// The Content-Security-Policy of every answer: scripts, styles and connections from this
    /// page's origin only; images from here, `data:` (Leaflet's CSS) and the tile server.
    static func contentSecurityPolicy(tileOrigin: String?) -> String {
        let images = ["'self'", "data:"] + (tileOrigin.map { [$0] } ?? [])
        return [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src " + images.joined(separator: " "),
            "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    static let indexHTML = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Burrow</title>
    <link rel="stylesheet" href="/leaflet/leaflet.css">
    <link rel="stylesheet" href="/app.css">
    <script src="/leaflet/leaflet.js" defer></script>
    <script src="/app.js" defer></script>
    </head>
    <body>
    <header>
      <h1>Burrow</h1>
      <label>Group <select id="group"></select></label>
      <button id="fit" type="button">Show everyone</button>
      <span id="connection" class="connection">connecting…</span>
    </header>
    <div id="notice" role="status" hidden></div>
    <div id="alerts" role="status"></div>
    <main>
      <div id="map" aria-label="Map of the family"></div>
      <aside>
        <section id="invites-section" hidden><h2>Invitations</h2><ul id="invites"></ul></section>
        <section><h2>Members</h2><ul id="members"></ul></section>
        <section id="requests-section" hidden><h2>Asking to join</h2><ul id="requests"></ul></section>
        <section>
          <h2>Chat</h2>
          <ol id="messages"></ol>
          <form id="chat-form">
            <input id="chat-text" maxlength="4000" autocomplete="off" placeholder="Write to the group" aria-label="Message">
            <button type="submit">Send</button>
          </form>
        </section>
        <section>
          <h2>Sharing where I am</h2>
          <p id="share-state"></p>
          <div id="share-controls">
            <label>Every <select id="share-interval">
              <option value="60">minute</option><option value="300">5 minutes</option><option value="900">15 minutes</option>
              <option value="3600">hour</option>
            </select></label>
            <button id="share-start" type="button">Start sharing</button>
            <button id="share-pause" type="button">Pause</button>
            <button id="share-resume" type="button">Resume</button>
            <button id="share-stop" type="button">Stop</button>
          </div>
        </section>
        <section>
          <h2>My contact card</h2>
          <button id="card-show" type="button">Show my card</button>
          <img id="card" alt="My contact card as a QR code" width="220" height="220" hidden>
          <p class="hint">Someone scans it with Burrow to start a private chat with you.</p>
        </section>
      </aside>
    </main>
    </body>
    </html>
    """#

    static let appCSS = #"""
    * { box-sizing: border-box; }
    body { margin: 0; font: 15px/1.4 system-ui, sans-serif; color: #1d2327; background: #f4f1ea; }
    header { display: flex; gap: 1em; align-items: center; padding: .5em 1em; background: #3d5a40; color: #fff; flex-wrap: wrap; }
    header h1 { font-size: 1.3em; margin: 0; }
    header select, header button { font: inherit; }
    .connection { margin-left: auto; font-size: .9em; opacity: .9; }
    .connection.down { color: #ffd27a; }
    main { display: flex; height: calc(100vh - 3.2em); }
    #map { flex: 1 1 60%; min-height: 300px; background: #dfe6e0; }
    #map.no-tiles { background: #e9efe9; }
    aside { flex: 0 0 380px; overflow-y: auto; padding: .5em 1em; background: #fffdf8; border-left: 1px solid #d6d0c4; }
    aside h2 { font-size: 1em; margin: 1em 0 .4em; color: #3d5a40; }
    ul, ol { list-style: none; margin: 0; padding: 0; }
    li { padding: .2em 0; }
    #messages { max-height: 40vh; overflow-y: auto; border: 1px solid #e6e0d4; padding: .3em; background: #fff; }
    #messages li .name { font-weight: 600; margin-right: .4em; }
    #messages li .time { color: #7a7468; font-size: .8em; margin-right: .4em; }
    #messages li.mine .name { color: #3d5a40; }
    .reactions { margin-left: .4em; font-size: .9em; }
    #chat-form { display: flex; gap: .4em; margin-top: .4em; }
    #chat-text { flex: 1; font: inherit; padding: .3em; }
    button { font: inherit; cursor: pointer; }
    .tag { font-size: .75em; background: #e6efe6; color: #3d5a40; border-radius: .6em; padding: 0 .5em; margin-left: .4em; }
    #alerts div, #notice { background: #fff3cd; border-bottom: 1px solid #e0c97a; padding: .4em 1em; }
    .hint { color: #7a7468; font-size: .85em; }
    .pin { overflow: visible; }
    .pin-dot { position: absolute; left: 0; top: 0; width: 14px; height: 14px; border-radius: 50%; background: #2f6fde; border: 2px solid #fff;
      box-shadow: 0 0 0 1px #2f6fde; }
    .pin.me .pin-dot { background: #d9480f; box-shadow: 0 0 0 1px #d9480f; }
    .pin.stale .pin-dot { background: #9a9a9a; box-shadow: 0 0 0 1px #9a9a9a; }
    .pin-label { position: absolute; left: 18px; top: -3px; white-space: nowrap; background: rgba(255,255,255,.9); padding: 0 .3em;
      border-radius: .3em; font-size: 13px; color: #1d2327; }
    .pin.stale .pin-label { color: #8a8a8a; }
    .accuracy { stroke: #2f6fde; fill: #2f6fde; }
    .popup-line { display: block; }
    @media (max-width: 800px) { main { flex-direction: column; height: auto; } #map { height: 55vh; } aside { flex: none; border: 0; } }
    """#

    static let appJS = #"""
    'use strict';
    (function () {
      const state = { me: null, group: null, groupId: null, map: null, markers: new Map(), circles: new Map(), retry: 1000,
        refreshing: null, fitted: false };
      const $ = (id) => document.getElementById(id);

      // Every string from the node may be a stranger's: text nodes only.
      function el(tag, cls, text) {
        const e = document.createElement(tag);
        if (cls) e.className = cls;
        if (text !== undefined && text !== null) e.textContent = String(text);
        return e;
      }
      function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
      function ago(ts) {
        const s = Math.max(0, Math.floor(Date.now() / 1000 - ts));
        if (s < 60) return 'just now';
        if (s < 3600) return Math.floor(s / 60) + ' min ago';
        if (s < 86400) return Math.floor(s / 3600) + ' h ago';
        return new Date(ts * 1000).toLocaleString();
      }
      function clock(ts) { return new Date(ts * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }); }
      function every(seconds) {
        if (seconds % 3600 === 0) return seconds === 3600 ? 'hour' : (seconds / 3600) + ' hours';
        if (seconds % 60 === 0) return seconds === 60 ? 'minute' : (seconds / 60) + ' minutes';
        return seconds + ' seconds';
      }

      async function api(path, body) {
        const options = { credentials: 'same-origin', headers: {} };
        if (body !== undefined) {
          options.method = 'POST';
          options.headers['Content-Type'] = 'application/json';
          options.headers['X-Burrow-CSRF'] = state.me ? state.me.csrf : '';
          options.body = JSON.stringify(body);
        }
        const response = await fetch(path, options);
        if (response.status === 401) { notice('This page is logged out: open the new link `burrow run --web` printed.'); throw new Error('logged out'); }
        if (!response.ok) throw new Error((await response.text()).trim() || response.statusText);
        return response.status === 204 ? null : response.json();
      }

      function notice(text) {
        const box = $('notice');
        box.textContent = text;
        box.hidden = !text;
      }

      function alertLine(text) {
        const line = el('div', null, text);
        $('alerts').appendChild(line);
        setTimeout(() => line.remove(), 30000);
      }

      // The map: tiles when configured, else a plain background; a scale either way.
      function setupMap() {
        const map = L.map('map', { worldCopyJump: true });
        map.setView([20, 0], 2);
        if (state.me.tiles) {
          const osm = state.me.tiles.indexOf('openstreetmap.org') >= 0;
          L.tileLayer(state.me.tiles, { maxZoom: 19, attribution: osm ? '© OpenStreetMap contributors' : '' }).addTo(map);
        } else {
          $('map').classList.add('no-tiles');
        }
        L.control.scale({ imperial: false }).addTo(map);
        state.map = map;
        // For people poking around and for the browser tests: the map and each member's marker.
        window.burrow = { map: map, markers: state.markers };
      }

      function pinIcon(pin) {
        const box = el('div', 'pin-box');
        box.appendChild(el('span', 'pin-dot'));
        box.appendChild(el('span', 'pin-label', pin.who + (pin.me ? ' (you)' : '')));
        return L.divIcon({ className: 'pin' + (pin.stale ? ' stale' : '') + (pin.me ? ' me' : ''), html: box, iconSize: [14, 14],
          iconAnchor: [7, 7] });
      }

      function pinPopup(pin) {
        const box = el('div');
        box.appendChild(el('strong', 'popup-line', pin.who + (pin.me ? ' (you)' : '')));
        box.appendChild(el('span', 'popup-line', 'seen ' + ago(pin.ts) + (pin.stale ? ' (out of date)' : '')));
        if (pin.acc > 0) box.appendChild(el('span', 'popup-line', 'within ' + Math.round(pin.acc) + ' m'));
        if (pin.batt !== null && pin.batt !== undefined) box.appendChild(el('span', 'popup-line', 'battery ' + pin.batt + ' %'));
        return box;
      }

      function renderPins(pins) {
        const seen = new Set();
        for (const pin of pins) {
          seen.add(pin.member);
          const at = [pin.lat, pin.lon];
          let marker = state.markers.get(pin.member);
          if (!marker) {
            marker = L.marker(at, { icon: pinIcon(pin), keyboard: true, title: pin.who }).addTo(state.map);
            state.markers.set(pin.member, marker);
          } else {
            marker.setLatLng(at);
            marker.setIcon(pinIcon(pin));
          }
          marker.getElement().dataset.member = pin.member;
          marker.bindPopup(pinPopup(pin));
          let circle = state.circles.get(pin.member);
          if (pin.acc > 0) {
            if (!circle) { circle = L.circle(at, { radius: pin.acc, className: 'accuracy', weight: 1, fillOpacity: 0.12 }).addTo(state.map); state.circles.set(pin.member, circle); }
            circle.setLatLng(at);
            circle.setRadius(pin.acc);
          } else if (circle) { circle.remove(); state.circles.delete(pin.member); }
        }
        for (const [member, marker] of state.markers) {
          if (!seen.has(member)) { marker.remove(); state.markers.delete(member); }
        }
        for (const [member, circle] of state.circles) {
          if (!seen.has(member)) { circle.remove(); state.circles.delete(member); }
        }
        if (!state.fitted && pins.length > 0) { fit(); state.fitted = true; }
      }

      function fit() {
        const points = [...state.markers.values()].map((m) => m.getLatLng());
        if (points.length === 0) return;
        state.map.fitBounds(L.latLngBounds(points), { padding: [60, 60], maxZoom: 16 });
      }

      function renderMembers(group) {
        const list = $('members');
        clear(list);
        for (const member of group.members) {
          const li = el('li', null, member.who);
          if (member.admin) li.appendChild(el('span', 'tag', 'admin'));
          if (member.me) li.appendChild(el('span', 'tag', 'you'));
          list.appendChild(li);
        }
      }

      function renderMessages(group) {
        const list = $('messages');
        const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
        clear(list);
        for (const message of group.messages) {
          const li = el('li', message.me ? 'mine' : null);
          li.dataset.id = message.id;
          li.appendChild(el('span', 'time', clock(message.ts)));
          li.appendChild(el('span', 'name', message.who));
          li.appendChild(el('span', 'text', message.text));
          const reactions = Object.entries(message.reactions || {});
          if (reactions.length > 0) li.appendChild(el('span', 'reactions', reactions.map(([emoji, n]) => emoji + ' ' + n).join('  ')));
          list.appendChild(li);
        }
        if (atBottom) list.scrollTop = list.scrollHeight;
      }

      function renderRequests(group) {
        const list = $('requests');
        clear(list);
        $('requests-section').hidden = !group.is_admin || group.requests.length === 0;
        for (const request of group.requests) {
          const li = el('li', null, request.who + ' ');
          li.appendChild(action('Approve', '/api/requests/' + request.id + '/approve', refreshGroup));
          li.appendChild(action('Reject', '/api/requests/' + request.id + '/reject', refreshGroup));
          list.appendChild(li);
        }
      }

      function renderInvites() {
        const list = $('invites');
        clear(list);
        $('invites-section').hidden = state.me.invites.length === 0;
        for (const invite of state.me.invites) {
          const li = el('li', null, invite.group_name + ' from ' + invite.who + ' ');
          li.appendChild(action('Join', '/api/invites/' + invite.id + '/accept', refreshAll));
          li.appendChild(action('Decline', '/api/invites/' + invite.id + '/decline', refreshAll));
          list.appendChild(li);
        }
      }

      function action(label, path, then) {
        const button = el('button', null, label);
        button.type = 'button';
        button.addEventListener('click', async () => {
          button.disabled = true;
          try { await api(path, {}); await then(); } catch (error) { alertLine(error.message); button.disabled = false; }
        });
        return button;
      }

      function renderShare(group) {
        const share = group.share;
        $('share-state').textContent = !share ? 'Not sharing with this group.'
          : (share.paused ? 'Paused. ' : 'Sharing every ' + every(share.interval) + ' from ' + share.source + '. ')
            + (share.last_publish_at ? 'Last sent ' + ago(share.last_publish_at) + '.' : 'Nothing sent yet.')
            + (share.error ? ' Problem: ' + share.error : '');
        $('share-start').hidden = !!share;
        $('share-pause').hidden = !share || share.paused;
        $('share-resume').hidden = !share || !share.paused;
        $('share-stop').hidden = !share;
        $('share-interval').value = String(share ? share.interval : 3600);
      }

      function renderGroup(group) {
        state.group = group;
        renderPins(group.pins);
        renderMembers(group);
        renderMessages(group);
        renderRequests(group);
        renderShare(group);
      }

      function renderGroups() {
        const select = $('group');
        clear(select);
        for (const group of state.me.groups) {
          const option = el('option', null, group.name);
          option.value = group.id;
          select.appendChild(option);
        }
        if (!state.me.groups.some((g) => g.id === state.groupId)) state.groupId = state.me.groups.length ? state.me.groups[0].id : null;
        if (state.groupId) select.value = state.groupId;
      }

      async function refreshGroup() {
        if (!state.groupId) return;
        renderGroup(await api('/api/groups/' + encodeURIComponent(state.groupId)));
      }

      async function refreshAll() {
        const csrf = state.me ? state.me.csrf : null;
        state.me = await api('/api/me');
        if (!state.me.csrf && csrf) state.me.csrf = csrf;
        renderGroups();
        renderInvites();
        await refreshGroup();
      }

      // A nudge says what changed; fetch it, coalescing bursts.
      function nudged(nudge) {
        if (nudge.type === 'alert' && nudge.text) alertLine(nudge.text);
        if (state.refreshing) return;
        state.refreshing = setTimeout(async () => {
          state.refreshing = null;
          try {
            if (nudge.type === 'invite' || nudge.type === 'group') await refreshAll(); else await refreshGroup();
          } catch (error) { /* shown by api() */ }
        }, 100);
      }

      function setConnection(text, down) {
        const c = $('connection');
        c.textContent = text;
        c.classList.toggle('down', !!down);
      }

      function connect() {
        const socket = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
        socket.addEventListener('open', () => {
          state.retry = 1000;
          setConnection('live');
          notice('');
          refreshAll().catch(() => {});
        });
        socket.addEventListener('message', (event) => {
          let nudge;
          try { nudge = JSON.parse(event.data); } catch (error) { return; }
          if (nudge && typeof nudge.type === 'string') nudged(nudge);
        });
        socket.addEventListener('close', () => {
          setConnection('reconnecting…', true);
          setTimeout(connect, state.retry);
          state.retry = Math.min(state.retry * 2, 10000);
        });
      }

      function wire() {
        $('group').addEventListener('change', () => { state.groupId = $('group').value; state.fitted = false; refreshGroup().catch(() => {}); });
        $('fit').addEventListener('click', fit);
        $('chat-form').addEventListener('submit', async (event) => {
          event.preventDefault();
          const input = $('chat-text');
          const text = input.value.trim();
          if (!text || !state.groupId) return;
          input.disabled = true;
          try {
            renderGroup(await api('/api/groups/' + encodeURIComponent(state.groupId) + '/chat', { text: text }));
            input.value = '';
          } catch (error) { alertLine('Not sent: ' + error.message); }
          input.disabled = false;
          input.focus();
        });
        const share = (name, extra) => async () => {
          try { renderGroup(await api('/api/groups/' + encodeURIComponent(state.groupId) + '/share', Object.assign({ action: name }, extra || {}))); }
          catch (error) { alertLine(error.message); }
        };
        $('share-start').addEventListener('click', () => share('start', { interval: Number($('share-interval').value) })());
        $('share-pause').addEventListener('click', share('pause'));
        $('share-resume').addEventListener('click', share('resume'));
        $('share-stop').addEventListener('click', share('stop'));
        $('share-interval').addEventListener('change', () => {
          if (state.group && state.group.share) share('start', { interval: Number($('share-interval').value) })();
        });
        $('card-show').addEventListener('click', () => { const img = $('card'); img.src = '/api/card.svg'; img.hidden = false; $('card-show').hidden = true; });
      }

      async function start() {
        wire();
        try { state.me = await api('/api/me'); } catch (error) { return; }
        setupMap();
        renderGroups();
        renderInvites();
        try { await refreshGroup(); } catch (error) { alertLine(error.message); }
        connect();
        // Ages on the map go stale with the clock.
        setInterval(() => { if (state.group) renderPins(state.group.pins); }, 30000);
      }

      start();
    })();
    """#
}
