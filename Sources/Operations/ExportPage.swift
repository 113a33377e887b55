import Foundation

/// One photo as the export page shows it: its small image in the grid, the larger one its link
/// opens, and the words that describe it.
struct ExportPhoto: Sendable {
    /// The grid's image, relative to the export's folder.
    var thumb: String
    /// The larger view the photo's link opens (the preview variant).
    var large: String
    /// The moment's cover image of this photo (the feed variant), when it is the cover.
    var cover: String?
    /// Words for people who cannot see it: its title, else when and where it was taken.
    var alt: String
    /// The line under the larger view.
    var caption: String
    /// `<img>` attributes painting its placeholder (see `MomentExport.placeholder`).
    var placeholder: String
    /// When it was taken, for the order of the photos in no moment.
    var time: WallClock?
}

/// A moment as the export page shows it.
struct ExportMoment: Sendable {
    var title: String
    var when: String
    var start: WallClock
    var place: String?
    var photos: [ExportPhoto]
    /// Which of `photos` is the cover.
    var coverIndex: Int
    var map: String?
}

/// The export's one page: month headings, a section per moment (cover, title, local time,
/// place, small map, photos), the photos in no moment, and a viewer that opens each photo
/// larger (arrow keys, Escape, swipe). Plain HTML and CSS with a small inline script, nothing
/// fetched from the network.
enum ExportPage {
    static func html(moments: [ExportMoment], loose: [ExportPhoto]) -> String {
        var body: [String] = []
        var months: [(key: String, name: String)] = []
        for (index, moment) in moments.enumerated() {
            if months.last?.key != moment.start.monthKey {
                months.append((moment.start.monthKey, moment.start.month))
                body.append(#"<h2 class="month" id="m\#(moment.start.monthKey)">\#(escape(moment.start.month))</h2>"#)
            }
            body.append(section(moment, group: "g\(index + 1)"))
        }
        if !loose.isEmpty {
            months.append(("loose", "Not in a moment"))
            body.append(#"<h2 class="month" id="mloose">Not in a moment</h2>"#)
            body.append(#"<div class="loose">\#(grid(loose, group: "loose"))</div>"#)
        }
        let photos = moments.reduce(loose.count) { $0 + $1.photos.count }
        let summary = [plural(moments.count, "moment"), plural(photos, "photo")].joined(separator: " · ")
        let navigation = months.count > 1
            ? #"<nav class="months">\#(months.map { ##"<a href="#m\##($0.key)">\##(escape($0.name))</a>"## }.joined())</nav>"#
            : ""
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Moments</title>
        <style>\(style)</style></head><body>
        <header><h1>Moments</h1><p class="sub">\(summary)</p>\(navigation)</header>
        <main>
        \(body.joined(separator: "\n"))
        </main>
        <script>\(script)</script>
        </body></html>

        """
    }

    private static func section(_ moment: ExportMoment, group: String) -> String {
        let coverPhoto = moment.photos[moment.coverIndex]
        let cover = coverPhoto.cover.map { source in
            #"<a class="cover" href="\#(escape(coverPhoto.large))" data-g="\#(group)" data-i="\#(moment.coverIndex)"><img src="\#(escape(source))"\#(coverPhoto.placeholder) alt="\#(escape(coverPhoto.alt))"></a>"#
        } ?? ""
        let place = moment.place.map { escape($0) + " · " } ?? ""
        return """
        <section>
        <div class="head\(cover.isEmpty ? " bare" : "")">\(cover)<div class="about">
        <h3>\(escape(moment.title))</h3>
        <p class="when">\(escape(moment.when))</p>
        <p class="where">\(place)\(plural(moment.photos.count, "photo"))</p>
        \(moment.map ?? "")
        </div></div>
        \(grid(moment.photos, group: group))
        </section>
        """
    }

    private static func grid(_ photos: [ExportPhoto], group: String) -> String {
        let items = photos.enumerated().map { index, photo in
            #"<li><a href="\#(escape(photo.large))" data-g="\#(group)" data-i="\#(index)" data-caption="\#(escape(photo.caption))"><img src="\#(escape(photo.thumb))"\#(photo.placeholder) alt="\#(escape(photo.alt))" loading="lazy"></a></li>"#
        }
        return #"<ul class="grid" id="\#(group)">\#(items.joined())</ul>"#
    }

    static func plural(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static let style = """
    *{box-sizing:border-box}
    html{-webkit-text-size-adjust:100%}
    body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1rem 4rem;color:#1f1f1f;background:#fbfbf9}
    h1{font-size:2rem;margin:.5rem 0 0}
    .sub{color:#666;margin:.1rem 0 .8rem}
    .months{display:flex;flex-wrap:wrap;gap:.2rem 1rem}
    a{color:#1d4ed8}
    h2.month{font-size:1.4rem;margin:2.2rem 0 .6rem;padding-bottom:.3rem;border-bottom:1px solid #ddd}
    section{margin:1.2rem 0 2.4rem}
    .head{display:grid;grid-template-columns:minmax(0,15rem) minmax(0,1fr);gap:1.2rem;align-items:start}
    .head.bare{grid-template-columns:1fr}
    .cover img{display:block;width:100%;aspect-ratio:4/5;object-fit:cover;border-radius:8px}
    h3{font-size:1.3rem;margin:0 0 .2rem}
    .when,.where{margin:0;color:#555}
    .map{display:block;width:100%;max-width:20rem;height:auto;margin-top:.8rem;border-radius:8px}
    .map .land{fill:#e9efe4}
    .map .area{fill:#cddff3;fill-opacity:.7;stroke:#5b8fd0;stroke-dasharray:4 3}
    .map .spot{fill:#d9480f;stroke:#fff;stroke-width:1.5}
    .map .scale{stroke:#333;stroke-width:2}
    .map text{font:11px system-ui,sans-serif;fill:#333}
    .grid{list-style:none;padding:0;margin:.8rem 0 0;display:grid;grid-template-columns:repeat(auto-fill,minmax(8rem,1fr));gap:4px}
    .grid a{display:block}
    .grid img{display:block;width:100%;aspect-ratio:1;object-fit:cover;border-radius:3px}
    a:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
    @media (max-width:40rem){
      body{padding:.6rem .6rem 3rem}
      h1{font-size:1.6rem}
      .head{grid-template-columns:minmax(0,1fr)}
      .cover img{aspect-ratio:3/2}
      .map{max-width:none}
      .grid{grid-template-columns:repeat(3,minmax(0,1fr));gap:2px}
    }
    .viewer{position:fixed;inset:0;z-index:10;display:flex;align-items:center;justify-content:center;background:rgba(0,0,0,.93);touch-action:pan-y}
    .viewer[hidden]{display:none}
    .viewer figure{margin:0;display:flex;flex-direction:column;align-items:center;max-width:100%}
    .viewer img{display:block;max-width:100vw;max-height:calc(100vh - 4rem);object-fit:contain}
    .viewer figcaption{color:#ddd;padding:.5rem 1rem;text-align:center}
    .viewer button{position:absolute;width:3rem;height:3rem;border:0;border-radius:50%;background:rgba(0,0,0,.45);color:#fff;font-size:2rem;line-height:1;cursor:pointer}
    .viewer .prev{left:.5rem;top:50%;transform:translateY(-50%)}
    .viewer .next{right:.5rem;top:50%;transform:translateY(-50%)}
    .viewer .close{right:.5rem;top:.5rem}
    body.viewing{overflow:hidden}
    """

    /// The viewer: a link's click opens its photo's larger view over the page; the arrow keys
    /// and a swipe go to the next or previous photo of the same group, Escape or a click beside
    /// the photo closes it. `#view-GROUP-INDEX` in the address opens one (a link to a photo).
    private static let script = """
    (function () {
      var view = document.createElement('div'), figure = document.createElement('figure');
      var img = document.createElement('img'), caption = document.createElement('figcaption');
      var list = [], group = '', at = 0, startX = null;
      view.className = 'viewer'; view.hidden = true; view.tabIndex = -1;
      view.setAttribute('role', 'dialog'); view.setAttribute('aria-modal', 'true'); view.setAttribute('aria-label', 'Photo');
      figure.appendChild(img); figure.appendChild(caption); view.appendChild(figure);
      function button(name, label, text, action) {
        var b = document.createElement('button');
        b.className = name; b.type = 'button'; b.setAttribute('aria-label', label); b.textContent = text;
        b.addEventListener('click', function (e) { e.stopPropagation(); action(); });
        view.appendChild(b);
      }
      button('prev', 'Previous', '\\u2039', function () { show(at - 1); });
      button('next', 'Next', '\\u203a', function () { show(at + 1); });
      button('close', 'Close', '\\u00d7', close);
      document.body.appendChild(view);
      function show(i) {
        at = (i + list.length) % list.length;
        var a = list[at], thumb = a.querySelector('img');
        img.src = a.getAttribute('href'); img.alt = thumb ? thumb.alt : '';
        caption.textContent = a.getAttribute('data-caption') || '';
        history.replaceState(null, '', '#view-' + group + '-' + at);
      }
      function open(g, i) {
        var grid = document.getElementById(g);
        if (!grid) return false;
        list = grid.querySelectorAll('a[data-i]'); group = g;
        if (!list.length) return false;
        view.hidden = false; document.body.classList.add('viewing');
        show(i); view.focus();
        return true;
      }
      function close() {
        if (view.hidden) return;
        view.hidden = true; img.removeAttribute('src'); document.body.classList.remove('viewing');
        history.replaceState(null, '', location.pathname + location.search);
        if (list[at]) list[at].focus();
      }
      document.addEventListener('click', function (e) {
        var a = e.target.closest && e.target.closest('a[data-g]');
        if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        if (open(a.getAttribute('data-g'), +a.getAttribute('data-i'))) e.preventDefault();
      });
      view.addEventListener('click', function (e) { if (e.target === view) close(); });
      document.addEventListener('keydown', function (e) {
        if (view.hidden) return;
        if (e.key === 'ArrowRight') show(at + 1);
        else if (e.key === 'ArrowLeft') show(at - 1);
        else if (e.key === 'Escape') close();
        else return;
        e.preventDefault();
      });
      view.addEventListener('touchstart', function (e) { startX = e.changedTouches[0].clientX; }, { passive: true });
      view.addEventListener('touchend', function (e) {
        if (startX === null) return;
        var dx = e.changedTouches[0].clientX - startX; startX = null;
        if (Math.abs(dx) > 40) show(at + (dx < 0 ? 1 : -1));
      });
      var asked = /^#view-([\\w-]+)-(\\d+)$/.exec(location.hash);
      if (asked) open(asked[1], +asked[2]);
      document.documentElement.setAttribute('data-viewer', 'ready');
    })();
    """
}
