import Catalog
import Hummingbird
import Moments
import Operations

/// The read API and the backend's declarations: pictures, moments and their pictures, places
/// around a point, covers set by a moment's creator, moments and places declared.
/// The same Operations and Catalog functions as `darkroom moments` and `darkroom places`.
struct CatalogHandler: Sendable {
    let environment: ServiceEnvironment

    /// `GET /v1/pictures/{id}`: a picture with its variants' URLs.
    func picture(id: Int64) async throws -> Response {
        let environment = environment
        guard let picture = try await environment.blocking({ try environment.moments.picture(id: id) }) else {
            throw APIError.notFound("no picture \(id)")
        }
        return JSONBody.response(environment.links.linked(picture))
    }

    /// `GET /v1/moments/{id}`: a moment with its place and picture count.
    func moment(id: Int64) async throws -> Response {
        let environment = environment
        guard let moment = try await environment.blocking({ try environment.moments.moment(id: id) }) else {
            throw APIError.notFound("no moment \(id)")
        }
        return JSONBody.response(moment)
    }

    /// `GET /v1/moments/{id}/pictures?limit=&after=`: one page of the moment's pictures in the
    /// stable order; `next` is the `after` of the following page.
    func momentPictures(id: Int64, query: Query) async throws -> Response {
        let limit = try query.integer("limit").map { Int(clamping: $0) } ?? MomentCatalog.defaultPageSize
        // An empty `after` (a client that sends the last page's absent `next` as it is) is the first page.
        let cursor = try MomentCatalog.pageRequest(limit: limit, after: query.string("after").flatMap { $0.isEmpty ? nil : $0 })
        let environment = environment
        guard var page = try await environment.blocking({ try environment.moments.page(ofMoment: id, after: cursor, limit: limit) }) else {
            throw APIError.notFound("no moment \(id)")
        }
        page.pictures = page.pictures.map(environment.links.linked)
        return JSONBody.response(page)
    }

    /// `PUT /v1/moments/{id}/cover` with `{"picture_id": 5, "user": "alice"}` (`null` hands the
    /// cover back to the policy): only the moment's creator may (403 otherwise).
    func setCover(momentId: Int64, body: [UInt8]) async throws -> Response {
        let json = try JSONObject(bytes: body, known: ["picture_id", "user"])
        let user = try JSONObject.required(json.string("user"), "user")
        guard json.has("picture_id") else { throw FieldError("picture_id", "is needed: a picture of the moment, or null to clear the cover") }
        let pictureId = try json.integer("picture_id")
        let environment = environment
        let moment = try await environment.blocking {
            _ = try environment.catalog.setCover(momentId: momentId, pictureId: pictureId, by: user)
            return try environment.moments.moment(id: momentId)
        }
        return JSONBody.response(moment)
    }

    /// `POST /v1/moments`: declares a new moment (409 naming the existing one when `id` is
    /// taken); `PUT /v1/moments/{id}` (`updating`): changes one, with the same fields but the id
    /// (404 when it does not exist). A `place_id` naming no place is answered 409. The pictures it matches join it at once. Answers 201 with
    /// the moment created, 200 with the moment changed.
    func declareMoment(body: [UInt8], updating: Int64? = nil) async throws -> Response {
        let fields = ["place_id", "start", "end", "creator", "visibility", "invitees", "title"]
        let json = try JSONObject(bytes: body, known: updating == nil ? fields + ["id"] : fields)
        let id = try updating ?? json.integer("id")
        try FieldError.checkBackendId(id)
        let moment = try MomentDeclaration.moment(
            id: id, placeId: try JSONObject.required(json.integer("place_id"), "place_id"),
            start: try JSONObject.required(json.string("start"), "start"), end: try JSONObject.required(json.string("end"), "end"),
            creator: try json.string("creator"), visibility: try json.string("visibility") ?? MomentDeclaration.defaultVisibility,
            invitees: try json.strings("invitees") ?? [], title: try json.string("title"))
        let environment = environment
        let view = try await environment.blocking {
            // A place that does not exist is a conflict with the catalog's state (409), to be
            // resolved by declaring it: not 404, which on PUT /v1/moments/{id} would say the
            // moment is gone. The catalog refuses it too, should the place go between this look
            // and the write.
            guard try environment.catalog.place(id: moment.placeId) != nil else {
                throw APIError.conflict("place \(moment.placeId) does not exist; declare it first (POST /v1/places)")
            }
            let (saved, _) = try environment.catalog.declareMoment(moment, id: id, as: updating == nil ? .create : .update)
            return try environment.moments.moment(id: saved.id)
        }
        return JSONBody.response(view, status: updating == nil ? .created : .ok)
    }

    /// `GET /v1/places/around?lat=&long=&rad=`: places whose centre lies within `rad` metres,
    /// nearest first (the app's `places/around_location`).
    func placesAround(query: Query) async throws -> Response {
        let radius = try query.requiredNumber("rad")
        let center = try PlaceCircle.center(lat: try query.requiredNumber("lat"), long: try query.requiredNumber("long"), rad: radius)
        let environment = environment
        let places = try await environment.blocking {
            try environment.catalog.places(around: center, radiusMetres: radius).map(PlaceView.init)
        }
        return JSONBody.response(PlaceList(places: places))
    }

    /// `POST /v1/places` with `{"lat", "long", "rad", "name"?, "id"?}`: declares a new place
    /// (409 naming the existing one when `id` is taken); answers 201 with it. `PUT
    /// /v1/places/{id}` (`updating`) with the same fields but the id changes one (404 when it
    /// does not exist) and answers 200.
    func declarePlace(body: [UInt8], updating: Int64? = nil) async throws -> Response {
        let fields = ["name", "lat", "long", "rad"]
        let json = try JSONObject(bytes: body, known: updating == nil ? fields + ["id"] : fields)
        let radius = try JSONObject.required(json.number("rad"), "rad")
        let center = try PlaceCircle.center(lat: try JSONObject.required(json.number("lat"), "lat"),
                                            long: try JSONObject.required(json.number("long"), "long"), rad: radius)
        let id = try updating ?? json.integer("id")
        try FieldError.checkBackendId(id)
        let name = try json.string("name")
        try FieldLimits.check("name", name)
        let environment = environment
        let place = try await environment.blocking {
            if let updating {
                try environment.catalog.updatePlace(id: updating, name: name, center: center, radiusMetres: radius)
            } else {
                try environment.catalog.declarePlace(id: id, name: name, center: center, radiusMetres: radius)
            }
        }
        return JSONBody.response(PlaceView(place), status: updating == nil ? .created : .ok)
    }
}

/// Places, as `GET /v1/places/around` answers them.
struct PlaceList: Encodable, Sendable {
    var places: [PlaceView]
}
