import Catalog
import ChildProcesses
import Foundation
import Testing

/// `darkroom moments export --html`: the page people share. Built from real photos through the
/// real binary, then rendered in headless Chromium at a desktop and a phone width.
@Suite("HTML export", .serialized)
struct ExportTests {
    /// A sample photo with the sidecar that places it.
    struct Photo {
        var sample: String
        var name: String
        var author: String
        var takenAt: String
        var position: (Double, Double)?
        var title: String? = nil
        var visibility: String? = nil
    }

    static let photos: [Photo] = [
        // The public picnic in the Garden, in May (Paris time).
        Photo(sample: "Landscape_6.jpg", name: "picnic-alice.jpg", author: "alice", takenAt: "2024-05-07T18:10:00+02:00",
              position: near(48.8566, 2.3522, north: 30), title: "The long table"),
        Photo(sample: "Portrait_8.jpg", name: "picnic-bob.jpg", author: "bob", takenAt: "2024-05-07T18:30:00+02:00",
              position: near(48.8566, 2.3522, east: -60)),
        Photo(sample: "FujiFilm_FinePixS1Pro_1.jpg", name: "picnic-carol.jpg", author: "carol", takenAt: "2024-05-07T21:45:00+02:00",
              position: near(48.8566, 2.3522, north: -40, east: 50)),
        // alice's private party in Sydney, in June: never on the page without --include-private.
        Photo(sample: "issue-exifr-13.jpg", name: "secret-one.jpg", author: "alice", takenAt: "2024-06-15T20:30:00+10:00",
              position: near(-33.8568, 151.2153, north: 20)),
        Photo(sample: "issue-exifr-59.jpg", name: "secret-two.jpg", author: "alice", takenAt: "2024-06-15T21:00:00+10:00",
              position: near(-33.8568, 151.2153, east: 20)),
        // erin in Brecon, in July: an automatic moment (private to her, as automatic moments are),
        // named from the gazetteer.
        Photo(sample: "png_with_exif_and_gps.png", name: "walk-erin.png", author: "erin", takenAt: "2024-07-20T14:00:00+01:00",
              position: (51.9457, -3.3914)),
        // Nowhere: in no moment, shown in a section of its own.
        Photo(sample: "hopper.jpg", name: "nowhere-dave.jpg", author: "dave", takenAt: "2024-05-09T09:30:00+02:00", position: nil),
        // Nowhere and marked private: left out like a private moment.
        Photo(sample: "Canon_EOS5D-MIII__K6A7944.JPG", name: "nowhere-private.jpg", author: "dave", takenAt: "2024-05-09T10:00:00+02:00",
              position: nil, visibility: "private"),
    ]

    /// A workspace whose catalog holds `photos`: the public picnic (moment 10), the private party
    /// (moment 20), erin's automatic moment and the photos in no moment.
    static func catalogued(store: CatalogKind = .sqlite) throws -> Workspace {
        let space = try Workspace(store: store)
        #expect(try space.run(["places", "add", "--id", "1", "--name", "Garden", "--lat", "48.8566", "--long", "2.3522", "--rad", "200"]).status == 0)
        #expect(try space.run(["places", "add", "--id", "2", "--name", "Hideout", "--lat=-33.8568", "--long", "151.2153", "--rad", "150"]).status == 0)
        let picnic = try space.run(["moments", "create", "--id", "10", "--place", "1", "--start", "2024-05-07T18:00:00+02:00",
                                    "--end", "2024-05-07T22:00:00+02:00", "--creator", "alice", "--title", "Picnic"])
        #expect(picnic.status == 0, "\(picnic.stderr)")
        let party = try space.run(["moments", "create", "--id", "20", "--place", "2", "--start", "2024-06-15T20:00:00+10:00",
                                   "--end", "2024-06-15T23:00:00+10:00", "--creator", "alice", "--visibility", "private",
                                   "--title", "Secret party"])
        #expect(party.status == 0, "\(party.stderr)")
        for photo in Self.photos {
            try space.drop(Workspace.packageRoot + "/samples/" + photo.sample, as: photo.name)
            var sidecar: [String: Any] = ["author_id": photo.author, "taken_at": photo.takenAt]
            if let (lat, long) = photo.position { (sidecar["latitude"], sidecar["longitude"]) = (lat, long) }
            sidecar["title"] = photo.title
            sidecar["visibility"] = photo.visibility
            try space.drop(bytes: [UInt8](try JSONSerialization.data(withJSONObject: sidecar)), as: photo.name + ".json")
        }
        let run = try space.run(["run", "--once", "--no-progress"])
        #expect(run.status == 0, "\(run.stderr)")
        return space
    }

    @Test(arguments: CatalogKind.available)
    func theSharedPageLeavesOutPrivateMomentsAndNamesNoSource(store: CatalogKind) throws {
        let space = try Self.catalogued(store: store)

        // What belongs to whom, from the catalog: each picture's media names as the export writes them.
        let (pictures, _, variants) = try space.records()
        #expect(pictures.count == Self.photos.count)
        func stems(_ names: Set<String>) -> Set<String> {
            let ids = Set(pictures.filter { names.contains($0.sourceName) }.compactMap(\.id))
            return Set(variants.filter { ids.contains($0.pictureId) }.map { (($0.path as NSString).lastPathComponent as NSString).deletingPathExtension })
        }
        let secret = stems(["secret-one.jpg", "secret-two.jpg", "nowhere-private.jpg", "walk-erin.png"])
        #expect(secret.count >= 3)
        #expect(Set(pictures.filter { $0.sourceName.hasPrefix("secret-") }.compactMap(\.momentId)) == [20])
        #expect(Set(pictures.filter { $0.sourceName.hasPrefix("picnic-") }.compactMap(\.momentId)) == [10])

        // The shared page: no private moment, no private photo.
        let site = space.root + "/site"
        let export = try space.run(["moments", "export", "--html", site])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("1 moment, 4 photos, 1 in no moment"), "\(export.stdout)")
        #expect(export.stdout.contains("left out: 2 private moment(s), 1 private photo(s)"), "\(export.stdout)")
        let page = try String(contentsOfFile: site + "/index.html", encoding: .utf8)
        let files = space.files(under: site)
        #expect(!page.contains("Secret party") && !page.contains("Hideout") && !page.contains("Brecon"))
        for stem in secret {
            #expect(!page.contains(stem), "a private picture's image is on the page")
            #expect(!files.contains { $0.contains(stem) }, "a private picture's image is in the folder")
        }
        try checkShareable(page: page, files: files, site: site)
        #expect(page.contains("Picnic") && page.contains("Garden"))
        #expect(page.contains("Tuesday 7 May 2024, 18:00–22:00"), "the moment's window in the place's local time")
        #expect(page.contains("The long table"), "a title is the photo's alt")
        #expect(page.contains("Photo taken 7 May 2024, 18:30 in Garden"), "the photo's own local time and place")
        #expect(page.contains(">May 2024</h2>"))
        #expect(page.contains(">Not in a moment</h2>") && page.contains("Photo taken 9 May 2024, 09:30"))
        #expect(page.contains("<svg class=\"map\"") && page.contains("Map of 3 photo positions at Garden"))

        // With --include-private, into the same folder: the party is there, and leaves again without it.
        let everything = try space.run(["moments", "export", "--html", site, "--include-private"])
        #expect(everything.status == 0, "\(everything.stderr)")
        let full = try String(contentsOfFile: site + "/index.html", encoding: .utf8)
        #expect(full.contains("Secret party") && full.contains("Hideout") && full.contains(">June 2024</h2>"))
        #expect(full.contains("Saturday 15 June 2024, 20:00–23:00"), "Sydney's local time, not UTC")
        #expect(full.contains("Brecon, 20 July 2024") && full.contains("Saturday 20 July 2024, 14:00"),
                "the automatic moment named from the gazetteer, at Brecon's time")
        #expect(full.contains("Map of 1 photo position at Brecon"))
        for stem in secret {
            #expect(full.contains(stem))
            #expect(space.files(under: site).contains { $0.contains(stem) })
        }
        try checkShareable(page: full, files: space.files(under: site), site: site)
        #expect(try space.run(["moments", "export", "--html", site]).status == 0)
        for stem in secret {
            #expect(!space.files(under: site).contains { $0.contains(stem) }, "an earlier export's private image stays behind")
        }
        let help = try space.run(["moments", "export", "--help"])
        #expect(help.stdout.contains("--include-private"))
    }

    @Test(.enabled(if: ExportTests.chromium != nil,
                   "no chromium binary found (install the Debian package `chromium`, or set CHROMIUM): the export is not rendered"))
    func thePageWorksInABrowserAtDesktopAndPhoneWidths() throws {
        let space = try Self.catalogued()
        let site = space.root + "/site"
        let export = try space.run(["moments", "export", "--html", site])
        #expect(export.status == 0, "\(export.stderr)")
        try render(site: site)
    }

    /// What every exported page must hold: no source name or path, a real alt on every image,
    /// each picture a link to its preview, every file the page names in the folder.
    func checkShareable(page: String, files: [String], site: String) throws {
        #expect(page.contains("<meta name=\"viewport\""))
        #expect(!page.contains("http://") && !page.contains("https://"), "nothing fetched from the network")
        for photo in Self.photos {
            #expect(!page.contains(photo.name), "source name \(photo.name) on the page")
        }
        #expect(!page.contains("/tmp/") && !page.contains("incoming") && !page.contains("library/"))
        for word in ["automatic", "declared", "cover:", "place -", "Moment -"] {
            #expect(!page.contains(word), "internal wording: \(word)")
        }
        let images = Self.tags("img", in: page)
        #expect(!images.isEmpty)
        for image in images {
            let alt = try #require(Self.attribute("alt", of: image), "an img without alt: \(image)")
            #expect(alt.count > 5 && !alt.contains("/") && !alt.lowercased().hasSuffix(".jpg"), "alt \(alt)")
            let source = try #require(Self.attribute("src", of: image))
            #expect(files.contains(source), "\(source) is not in the folder")
        }
        let links = Self.tags("a", in: page).filter { $0.contains("data-i=") }
        #expect(links.count >= images.count)
        for link in links {
            let target = try #require(Self.attribute("href", of: link))
            #expect(target.hasPrefix("media/") && target.contains("-preview."), "\(target) is not a preview")
            #expect(files.contains(target), "\(target) is not in the folder")
        }
    }

    /// The page in headless Chromium at 1280 and 390 pixels wide, and once with a photo open.
    func render(site: String) throws {
        let chromium = try #require(Self.chromium)
        let shots = NSTemporaryDirectory() + "darkroom-export-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let url = URL(fileURLWithPath: site + "/index.html").absoluteString
        let dom = try Self.chromium(chromium, ["--dump-dom", "--window-size=390,844", url])
        #expect(dom.contains("data-viewer=\"ready\""), "the page's script ran without an error")
        #expect(dom.contains(">May 2024</h2>") && dom.contains("Garden"))
        // A link to one photo opens the viewer on its preview.
        let opened = try Self.chromium(chromium, ["--dump-dom", "--window-size=390,844", url + "#view-g1-1"])
        let viewer = try #require(Self.tags("div", in: opened).first { $0.contains("class=\"viewer\"") }, "no viewer in \(opened.suffix(2000))")
        #expect(!viewer.contains("hidden"), "the viewer stays closed: \(viewer)")
        #expect(opened.contains("<figcaption>") && opened.range(of: #"<figure><img src="media/[^"]+-preview\.[a-z]+""#, options: .regularExpression) != nil)
        // The viewer's keys and swipes, driven from a page that holds the export in a frame.
        let steps = try Self.chromium(chromium, ["--dump-dom", "--allow-file-access-from-files", "--window-size=390,844",
                                                 try Self.viewerHarness(beside: site)])
        let trace = steps.range(of: #"(?<=<pre id="trace">)[^<]*"#, options: .regularExpression).map { String(steps[$0]) } ?? ""
        let states = trace.split(separator: "\n").map(String.init)
        #expect(states.count == 7, "the harness ran: \(steps.suffix(1500))")
        if states.count == 7 {
            let opened = states[0], right = states[1], left = states[2], wrapped = states[3]
            #expect(opened.hasPrefix("open g1 0 media/") && opened.contains("-preview."), "a click opens the preview: \(opened)")
            #expect(right.hasPrefix("open g1 1 ") && left == opened, "ArrowRight, ArrowLeft: \(right), \(left)")
            #expect(wrapped.hasPrefix("open g1 2 "), "ArrowLeft from the first goes to the last: \(wrapped)")
            #expect(states[4].hasPrefix("open g1 0 ") && states[5].hasPrefix("open g1 2 "), "swipe left, swipe right: \(states[4]), \(states[5])")
            #expect(states[6].hasPrefix("closed"), "Escape closes: \(states[6])")
        }
        for (name, size, address) in [("desktop", "1280,900", url), ("phone", "390,844", url), ("phone-viewer", "390,844", url + "#view-g1-0")] {
            let file = shots + "/export-\(name).png"
            try? FileManager.default.removeItem(atPath: file)
            _ = try Self.chromium(chromium, ["--screenshot=" + file, "--window-size=" + size, address])
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            print("ExportTests: screenshot \(name) (\(size)): \(file), \(bytes.count) bytes")
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(file) is not a PNG")
            #expect(bytes.count > 20_000, "\(file) is nearly empty (\(bytes.count) bytes)")
        }
    }

    /// A page beside the export's folder that loads it in a frame, clicks the first photo, then
    /// presses ArrowRight, ArrowLeft, ArrowLeft, swipes left, swipes right and presses Escape,
    /// writing the viewer's state after each step (open or closed, group, index, image) into
    /// `<pre id="trace">`. Returns its address.
    static func viewerHarness(beside site: String) throws -> String {
        let path = (site as NSString).deletingLastPathComponent + "/viewer-harness.html"
        let page = """
        <!doctype html><html><body><iframe id="frame" src="\((site as NSString).lastPathComponent)/index.html" width="390" height="800"></iframe>
        <pre id="trace"></pre><script>
        var frame = document.getElementById('frame');
        frame.addEventListener('load', function () {
          var d = frame.contentDocument, w = frame.contentWindow, lines = [];
          function state() {
            var v = d.querySelector('.viewer'), m = /#view-(.+)-(\\d+)$/.exec(w.location.hash) || ['', '-', '-'];
            lines.push((v.hidden ? 'closed' : 'open') + ' ' + m[1] + ' ' + m[2] + ' ' + (v.querySelector('img').getAttribute('src') || ''));
          }
          function key(name) { d.dispatchEvent(new w.KeyboardEvent('keydown', { key: name, bubbles: true })); state(); }
          function swipe(from, to) {
            var v = d.querySelector('.viewer');
            var start = new w.Event('touchstart'); start.changedTouches = [{ clientX: from }]; v.dispatchEvent(start);
            var end = new w.Event('touchend'); end.changedTouches = [{ clientX: to }]; v.dispatchEvent(end);
            state();
          }
          d.querySelector('#g1 a').click(); state();
          key('ArrowRight'); key('ArrowLeft'); key('ArrowLeft');
          swipe(300, 100); swipe(100, 300);
          key('Escape');
          document.getElementById('trace').textContent = lines.join('\\n');
        });
        </script></body></html>
        """
        try page.write(toFile: path, atomically: true, encoding: .utf8)
        return URL(fileURLWithPath: path).absoluteString
    }

    /// `$CHROMIUM`, else the first of the usual names on the PATH.
    static var chromium: String? {
        if let path = ProcessInfo.processInfo.environment["CHROMIUM"] { return path }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }

    /// Runs headless Chromium with its own profile folder; returns its standard output.
    static func chromium(_ binary: String, _ arguments: [String]) throws -> String {
        let profile = NSTemporaryDirectory() + "darkroom-chromium-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                             "--user-data-dir=" + profile, "--virtual-time-budget=3000"] + arguments
        let output = profile + ".out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: output) }
        process.standardOutput = FileHandle(forWritingAtPath: output)
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        #expect(process.waitForExit(within: 120), "chromium \(arguments) did not end")
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    /// The opening tags `<name ...>` of a page.
    static func tags(_ name: String, in page: String) -> [String] {
        var found: [String] = []
        var rest = page[...]
        while let start = rest.range(of: "<" + name + " ") {
            guard let end = rest[start.upperBound...].firstIndex(of: ">") else { break }
            found.append(String(rest[start.lowerBound...end]))
            rest = rest[end...]
        }
        return found
    }

    /// An attribute's value in an opening tag, entities left as they are.
    static func attribute(_ name: String, of tag: String) -> String? {
        guard let start = tag.range(of: " " + name + "=\"") else { return nil }
        let value = tag[start.upperBound...].prefix { $0 != "\"" }
        return String(value)
    }
}
