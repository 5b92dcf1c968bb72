import Foundation

/// The WebSocket URLs of a server's routes, from the app's base URL: `http` becomes `ws`,
/// `https` becomes `wss`, and the base URL's path stays in front of the route.
enum ServerURL {
    /// `{ws|wss}://host[:port][/prefix]/{route}/{appID}` with the app id percent-encoded as
    /// one path segment; a base URL that is not an http(s) or ws(s) URL throws `SyncError`
    /// with `code`.
    static func webSocket(baseURL: String, route: String, appID: String, suffix: String = "",
                          failing code: SyncError.Code) throws -> URL {
        guard var components = URLComponents(string: baseURL), let scheme = components.scheme?.lowercased() else {
            throw SyncError(code, "'\(baseURL)' is not a URL")
        }
        switch scheme {
        case "http", "ws": components.scheme = "ws"
        case "https", "wss": components.scheme = "wss"
        default: throw SyncError(code, "'\(baseURL)' is not an http(s) URL")
        }
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))
        let app = appID.addingPercentEncoding(withAllowedCharacters: allowed) ?? appID
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.percentEncodedPath = prefix + "/" + route + "/" + app + suffix
        guard let url = components.url else { throw SyncError(code, "'\(baseURL)' does not make a \(route) URL") }
        return url
    }
}
