import PostgresStore

/// The moment engine's frequent lookups as two server functions, each answering in one round
/// trip what the engine asks one after another while it files a picture, and the write of a
/// picture's facts and moment that can go in the same statement as the second:
/// - `darkroom_placing`: the declared moments at a point and time, the pictures of automatic
///   moments near it, and the places holding it;
/// - `darkroom_moment_digest`: a moment's digest, the picture its cover rule asks for next, and
///   the places holding its first picture;
/// - `darkroom_save_picture`: a picture's facts, and its moment, in the moments.
///
/// A statement sent as text is also planned anew every time, which cost about as much as
/// running these. A PL/pgSQL function keeps its statements' plans for the life of the
/// connection (and the pool keeps its connections), and these plans are the generic ones
/// (`force_generic_plan`): left to choose, the server plans every call for its values, while
/// these lookups take the same indexes whatever the values.
///
/// Rows are told apart by their first column, `kind`; the other columns are those of
/// `PostgresMomentStore`'s row mappings, in their order, null where a kind has none. A moment
/// or place with two boxes (across the date line) may come twice: the caller keeps one.
///
/// Every join goes from what the GiST index found to its rows by primary key (a lateral
/// subquery with `LIMIT 1`, which the planner cannot turn around): a generic plan otherwise
/// hashes whole tables of places or moments, a cost that grows with the catalog.
enum PostgresMomentLookups {
    /// Where each group of columns starts in a row of `darkroom_placing`.
    enum Placing {
        /// A moment's columns with its invitees (`momentColumns`, 12).
        static let moment = 1
        /// A place's (`placeColumns`, 5).
        static let place = 13
        /// A picture's facts (`pictureColumns`, 8), then its moment id.
        static let picture = 18
    }

    /// Where each group of columns starts in a row of `darkroom_moment_digest`.
    enum Digest {
        /// First and last capture time, best score.
        static let aggregates = 1
        /// The first picture in the stable order (8 columns).
        static let earliest = 4
        /// The first picture within the margin of the best score (8 columns).
        static let cover = 12
        /// A place holding the first picture (5 columns).
        static let place = 20
    }

    static let migration = PostgresMigrations.Migration("catalog-moment-lookup-functions", [
        // The digest's first and last capture times are read from the two ends of this index
        // (with the score index, the best score from its end): without it they are aggregates
        // over every picture of the moment, a cost that grows with the moment (a festival's
        // thousands of photos), as SQLite's index of the same columns avoids.
        "CREATE INDEX pictures_in_moment_by_time ON pictures (moment_id, moment_time)",
        // Rows of kind 'declared' (moment and place): declared moments whose boxes hold the point
        // at a time in p_from ... p_through (none when p_from is null). Rows of kind 'neighbour'
        // (picture, its moment id, its moment): pictures of automatic moments in the box
        // p_low ... p_high of (latitude, longitude, time) by p_author (null: those without an
        // author), other than p_picture (none when p_low is null). Rows of kind 'place': the places
        // whose boxes hold the point, when p_places.
        """
        CREATE FUNCTION darkroom_placing(p_latitude double precision, p_longitude double precision,
                                         p_from double precision, p_through double precision,
                                         p_low double precision[], p_high double precision[], p_author text, p_picture bigint,
                                         p_places boolean)
        RETURNS TABLE (
            kind text,
            m_id bigint, m_kind text, m_place bigint, m_start double precision, m_end double precision, m_creator text,
            m_visibility text, m_title text, m_cover bigint, m_cover_source text, m_cover_reason text, m_invitees text[],
            l_id bigint, l_name text, l_latitude double precision, l_longitude double precision, l_radius double precision,
            n_id bigint, n_sha256 text, n_author text, n_time double precision, n_latitude double precision,
            n_longitude double precision, n_requested bigint, n_score double precision, n_moment bigint
        ) LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
        BEGIN
            RETURN QUERY
            -- The box first, then the moments of what it holds: a plan from the moments' side
            -- reads every moment's pictures.
            WITH near AS MATERIALIZED (
                SELECT p.id, p.sha256, p.author_id, p.moment_time, p.latitude, p.longitude, p.requested_moment_id,
                       p.cover_score, p.moment_id
                FROM pictures p
                WHERE p_low IS NOT NULL AND p.position && cube(p_low, p_high) AND p.position IS NOT NULL
                  AND p.author_id IS NOT DISTINCT FROM p_author AND p.id <> p_picture
            )
            SELECT 'declared', m.id, m.kind, m.place_id, m.start_at, m.end_at, m.creator, m.visibility, m.title,
                   m.cover_picture_id, m.cover_source, m.cover_reason,
                   ARRAY(SELECT i.user_id FROM moment_invitees i WHERE i.moment_id = m.id ORDER BY i.user_id),
                   l.id, l.name, l.latitude, l.longitude, l.radius_metres,
                   NULL::bigint, NULL::text, NULL::text, NULL::double precision, NULL::double precision,
                   NULL::double precision, NULL::bigint, NULL::double precision, NULL::bigint
            FROM moment_boxes b
            CROSS JOIN LATERAL (SELECT * FROM moments m WHERE m.id = b.moment_id LIMIT 1) m
            CROSS JOIN LATERAL (SELECT * FROM places l WHERE l.id = m.place_id LIMIT 1) l
            WHERE p_from IS NOT NULL
              AND b.box && cube(ARRAY[p_latitude, p_longitude, p_from], ARRAY[p_latitude, p_longitude, p_through])
            UNION ALL
            SELECT 'neighbour', m.id, m.kind, m.place_id, m.start_at, m.end_at, m.creator, m.visibility, m.title,
                   m.cover_picture_id, m.cover_source, m.cover_reason,
                   ARRAY(SELECT i.user_id FROM moment_invitees i WHERE i.moment_id = m.id ORDER BY i.user_id),
                   NULL::bigint, NULL::text, NULL::double precision, NULL::double precision, NULL::double precision,
                   near.id, near.sha256::text, near.author_id, near.moment_time, near.latitude, near.longitude,
                   near.requested_moment_id, near.cover_score, near.moment_id
            FROM near CROSS JOIN LATERAL (SELECT * FROM moments m WHERE m.id = near.moment_id AND m.kind = 'automatic' LIMIT 1) m
            UNION ALL
            SELECT 'place', NULL::bigint, NULL::text, NULL::bigint, NULL::double precision, NULL::double precision,
                   NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::text[],
                   l.id, l.name, l.latitude, l.longitude, l.radius_metres,
                   NULL::bigint, NULL::text, NULL::text, NULL::double precision, NULL::double precision,
                   NULL::double precision, NULL::bigint, NULL::double precision, NULL::bigint
            FROM place_boxes b CROSS JOIN LATERAL (SELECT * FROM places l WHERE l.id = b.place_id LIMIT 1) l
            WHERE p_places AND b.box && cube(ARRAY[p_latitude, p_longitude], ARRAY[p_latitude, p_longitude]);
        END $$
        """,
        // (Volatile, so that it sees the write of darkroom_save_picture called in the same
        // statement before it.)
        // One row of kind 'digest': the capture window and best score of a moment's pictures, the
        // first picture in the stable order (capture time, none last, then key and id) and, when
        // p_margin is given (policy `best`), the first picture within it of the best score. Then,
        // when p_places, rows of kind 'place': the places whose boxes hold the first picture.
        """
        CREATE FUNCTION darkroom_moment_digest(p_moment bigint, p_margin double precision, p_places boolean)
        RETURNS TABLE (
            kind text,
            first_time double precision, last_time double precision, best_score double precision,
            e_id bigint, e_sha256 text, e_author text, e_time double precision, e_latitude double precision,
            e_longitude double precision, e_requested bigint, e_score double precision,
            c_id bigint, c_sha256 text, c_author text, c_time double precision, c_latitude double precision,
            c_longitude double precision, c_requested bigint, c_score double precision,
            l_id bigint, l_name text, l_latitude double precision, l_longitude double precision, l_radius double precision
        ) LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
        DECLARE
            anchor_latitude double precision;
            anchor_longitude double precision;
        BEGIN
            RETURN QUERY
            SELECT 'digest', a.first, a.last, a.best,
                   e.id, e.sha256::text, e.author_id, e.moment_time, e.latitude, e.longitude, e.requested_moment_id, e.cover_score,
                   c.id, c.sha256::text, c.author_id, c.moment_time, c.latitude, c.longitude, c.requested_moment_id, c.cover_score,
                   NULL::bigint, NULL::text, NULL::double precision, NULL::double precision, NULL::double precision
            FROM (
                SELECT MIN(p.moment_time) AS first, MAX(p.moment_time) AS last, MAX(p.cover_score) AS best
                FROM pictures p WHERE p.moment_id = p_moment
            ) a
            LEFT JOIN LATERAL (
                SELECT p.id, p.sha256, p.author_id, p.moment_time, p.latitude, p.longitude, p.requested_moment_id, p.cover_score
                FROM pictures p WHERE p.moment_id = p_moment
                ORDER BY p.moment_time IS NULL, p.moment_time, p.sha256, p.id LIMIT 1
            ) e ON true
            LEFT JOIN LATERAL (
                SELECT p.id, p.sha256, p.author_id, p.moment_time, p.latitude, p.longitude, p.requested_moment_id, p.cover_score
                FROM pictures p WHERE p_margin IS NOT NULL AND p.moment_id = p_moment AND p.cover_score >= a.best - p_margin
                ORDER BY p.moment_time IS NULL, p.moment_time, p.sha256, p.id LIMIT 1
            ) c ON true;
            IF NOT p_places THEN RETURN; END IF;
            SELECT p.latitude, p.longitude INTO anchor_latitude, anchor_longitude
            FROM pictures p WHERE p.moment_id = p_moment
            ORDER BY p.moment_time IS NULL, p.moment_time, p.sha256, p.id LIMIT 1;
            IF anchor_latitude IS NULL OR anchor_longitude IS NULL THEN RETURN; END IF;
            RETURN QUERY
            SELECT 'place', NULL::double precision, NULL::double precision, NULL::double precision,
                   NULL::bigint, NULL::text, NULL::text, NULL::double precision, NULL::double precision,
                   NULL::double precision, NULL::bigint, NULL::double precision,
                   NULL::bigint, NULL::text, NULL::text, NULL::double precision, NULL::double precision,
                   NULL::double precision, NULL::bigint, NULL::double precision,
                   l.id, l.name, l.latitude, l.longitude, l.radius_metres
            FROM place_boxes b CROSS JOIN LATERAL (SELECT * FROM places l WHERE l.id = b.place_id LIMIT 1) l
            WHERE b.box && cube(ARRAY[anchor_latitude, anchor_longitude], ARRAY[anchor_latitude, anchor_longitude]);
        END $$
        """,
        // A picture's facts put in the moments, with its moment when p_assign: the moment store's
        // savePicture, or savePicture and assign at once. Returns the picture's moment id.
        """
        CREATE FUNCTION darkroom_save_picture(p_id bigint, p_author text, p_time double precision,
                                              p_latitude double precision, p_longitude double precision, p_requested bigint,
                                              p_score double precision, p_position double precision[],
                                              p_assign boolean, p_moment bigint)
        RETURNS bigint LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
        DECLARE
            filed bigint;
        BEGIN
            UPDATE pictures SET in_moments = true, author_id = p_author, moment_time = p_time,
                   latitude = p_latitude, longitude = p_longitude, requested_moment_id = p_requested, cover_score = p_score,
                   position = CASE WHEN p_position IS NULL THEN NULL ELSE cube(p_position) END,
                   moment_id = CASE WHEN p_assign THEN p_moment ELSE moment_id END
            WHERE id = p_id
            RETURNING moment_id INTO filed;
            RETURN filed;
        END $$
        """,
    ])
}
