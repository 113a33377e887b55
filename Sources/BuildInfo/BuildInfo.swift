import CBuildInfo

/// Which Darkroom this is: its version, the commit and date of its build, and the C libraries
/// it runs with. `darkroom --version`, `darkroom version --json` and `/metrics`
/// (`darkroom_build_info`) all say the same.
public enum BuildInfo {
    /// Darkroom's version, raised with each release.
    public static let version = "0.11.0"
    /// The source commit (short hash, "-dirty" for uncommitted changes), or "unknown".
    public static var commit: String { String(cString: darkroom_build_commit()) }
    /// When the build's information was written (UTC), or "unknown".
    public static var date: String { String(cString: darkroom_build_date()) }

    /// The C libraries by name, with their versions.
    public static var libraries: [(name: String, version: String)] {
        [("libjpeg-turbo", String(cString: darkroom_libjpeg_version())),
         ("libpng", String(cString: darkroom_libpng_version())),
         ("libexif", String(cString: darkroom_libexif_version())),
         ("sqlite", String(cString: darkroom_sqlite_version())),
         ("libheif", String(cString: darkroom_libheif_version())),
         ("libwebp", String(cString: darkroom_libwebp_version())),
         ("lcms2", String(cString: darkroom_lcms2_version()))]
    }

    /// One line, as `darkroom --version` prints it.
    public static var line: String { "darkroom \(version) (commit \(commit), built \(date))" }
}
