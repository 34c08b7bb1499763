#!/usr/bin/env bash
# A real WordPress + WooCommerce on loopback for the real-store tests (tests/suite/real_woo/).
#   bash .ci/real-woo.sh up     # stand the store up (reused when it is already up), write $ROOT/env.sh
#   bash .ci/real-woo.sh test   # up, then the real-store tests (ignored by a plain `cargo test`)
#   bash .ci/real-woo.sh down   # stop the web server (the database and files stay for a warm restart)
# The store is built by ../shared/upstream/woo/real-store/setup.sh from its two tarballs with
# Debian's PHP and MariaDB, loaded with tests/suite/real_woo/catalog.php. Everything it writes goes
# under BCP_REAL_WOO_ROOT (default /tmp/bcp-real-woo): the shared folder is read-only in CI.
# Brazilian Market on WooCommerce (CPF/CNPJ, house number, bairro: the plugin Brazilian stores run)
# is installed from the shared tarball unless BCP_REAL_WOO_BRAZIL=off; BCP_REAL_WOO_BAIRRO=required
# makes the bairro required (that variant is a second store: another ROOT/PORT/DB).
# For Pix (issue 38) every `up`, on a fresh or a reused store, makes sure of a REST API v3 key with
# read/write permission for the admin user (exported as BCP_REAL_WOO_V3_KEY/_SECRET), the offline
# gateway bacs enabled (BCP_REAL_WOO_PIX_GATEWAY: it leaves the order on-hold), and a web server
# started with WOO_V3_FAKE_TLS=1 (WooCommerce takes the key's Basic auth only when is_ssl()).
# When the store cannot be stood up (no apt, no PHP/MariaDB, a failed build, no v3 key) `up` says
# why and exits 1: CI fails rather than run without the real-store tests. Those tests are
# `#[ignore = "needs the real WooCommerce: …"]` and fail when run without the store.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=${BCP_REAL_WOO_ROOT:-/tmp/bcp-real-woo}
PORT=${BCP_REAL_WOO_PORT:-18391}
DB=${BCP_REAL_WOO_DB:-bcp_real_woo}
SHARED=${BCP_REAL_WOO_SHARED:-$REPO/../shared/upstream/woo/real-store}
CATALOG=$REPO/tests/suite/real_woo/catalog.php
BRAZIL=${BCP_REAL_WOO_BRAZIL:-on}
BAIRRO=${BCP_REAL_WOO_BAIRRO:-optional}
PLUGIN_TARBALL=brazilian-market-on-woocommerce-blocks-support-b765223.tar.xz
PLUGIN_MAIN=woocommerce-extra-checkout-fields-for-brazil/woocommerce-extra-checkout-fields-for-brazil.php
URL="http://127.0.0.1:$PORT/"
ENV_FILE=$ROOT/env.sh
# The gateway the Pix tests place the unpaid order with ([pix] store_gateway).
PIX_GATEWAY=bacs
V3_KEY=
V3_SECRET=
PIX_PROBLEM=
# Every web server this script starts (and setup.sh's first one) marks REST v3 requests as TLS.
export WOO_V3_FAKE_TLS=1

log() { echo "== real-woo: $*" >&2; }

write_env() {
    mkdir -p "$ROOT"
    {
        echo "export BCP_REAL_WOO_ROOT='$ROOT'"
        echo "export BCP_REAL_WOO_BRAZIL='$BRAZIL'"
        echo "export BCP_REAL_WOO_BAIRRO='$BAIRRO'"
        echo "export BCP_REAL_WOO_DB='$DB'"
        if [ -n "${1:-}" ]; then
            echo "unset BCP_REAL_WOO_URL"
            printf "export BCP_REAL_WOO_SKIP=%q\n" "$1"
        else
            echo "export BCP_REAL_WOO_URL='$URL'"
            echo "export BCP_REAL_WOO_V3_KEY='$V3_KEY'"
            echo "export BCP_REAL_WOO_V3_SECRET='$V3_SECRET'"
            echo "export BCP_REAL_WOO_PIX_GATEWAY='$PIX_GATEWAY'"
            echo "unset BCP_REAL_WOO_SKIP"
        fi
    } > "$ENV_FILE"
}

unavailable() {
    log "store NOT available: $1"
    write_env "$1"
    exit 1
}

answers() {
    curl -sf -m 10 -o /dev/null "${URL}wp-json/wc/store/v1/products?per_page=1"
}

# The fingerprint of what the store was built from: a changed catalog means a fresh store.
fingerprint() {
    { cat "$CATALOG" "$SHARED/setup.sh"; declare -f brazil; echo "$BRAZIL $BAIRRO $PLUGIN_TARBALL"; } |
        sha256sum | cut -d' ' -f1
}

# Installs and activates Brazilian Market on WooCommerce: person type 2 (individuals, CPF), the
# CPF's check digits validated, the bairro optional or required (BAIRRO). Not person type 1
# ("individual or company"): the plugin's block fields then make CPF, CNPJ and company name all
# required for every order (measured on 10.9.4), so no individual could buy at all.
brazil() {
    [ "$BRAZIL" = off ] && return 0
    [ -f "$SHARED/$PLUGIN_TARBALL" ] || { echo "no $SHARED/$PLUGIN_TARBALL"; return 1; }
    tar -xJf "$SHARED/$PLUGIN_TARBALL" -C "$ROOT/site/wp-content/plugins"
    local required=0
    if [ "$BAIRRO" = required ]; then required=1; fi
    cat > "$ROOT/brazil.php" <<PHP
<?php
\$_SERVER['HTTP_HOST'] = '127.0.0.1:$PORT'; \$_SERVER['REQUEST_URI'] = '/';
define( 'WP_ADMIN', true );
require '$ROOT/site/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
update_option( 'wcbcf_settings', array( 'person_type' => '2', 'validate_cpf' => '1', 'neighborhood_required' => '$required' ) );
\$r = activate_plugin( '$PLUGIN_MAIN' );
echo is_wp_error( \$r ) ? 'brazil: ' . \$r->get_error_message() : 'brazil activated', PHP_EOL;
PHP
    php "$ROOT/brazil.php" 2>&1 | tail -1 | tee /dev/stderr | grep -q '^brazil activated'
}

# What Pix needs from the store, on a fresh or a reused one: the admin's REST API v3 key with
# read/write permission (made once, its pair kept in $ROOT/v3-key; WooCommerce keeps the secret as
# given and the key as wc_api_hash(key)) and the gateway $PIX_GATEWAY enabled. Then a v3 read with
# the key must answer 200: a web server started without WOO_V3_FAKE_TLS answers 401, so it is
# restarted once with it.
pix_ready() {
    cat > "$ROOT/pix.php" <<PHP
<?php
\$_SERVER['HTTP_HOST'] = '127.0.0.1:$PORT'; \$_SERVER['REQUEST_URI'] = '/';
require '$ROOT/site/wp-load.php';
global \$wpdb;
\$file = '$ROOT/v3-key';
\$pair = is_file( \$file ) ? explode( ' ', trim( file_get_contents( \$file ) ) ) : array();
if ( count( \$pair ) !== 2 ) {
    \$pair = array( 'ck_' . wc_rand_hash(), 'cs_' . wc_rand_hash() );
    file_put_contents( \$file, implode( ' ', \$pair ) . "\\n" );
    chmod( \$file, 0600 );
}
\$table = \$wpdb->prefix . 'woocommerce_api_keys';
\$hash = wc_api_hash( \$pair[0] );
\$wpdb->delete( \$table, array( 'description' => 'bcp-bridge tests' ) );
\$wpdb->insert( \$table, array(
    'user_id' => 1, 'description' => 'bcp-bridge tests', 'permissions' => 'read_write',
    'consumer_key' => \$hash, 'consumer_secret' => \$pair[1], 'truncated_key' => substr( \$pair[0], -7 ),
) );
\$row = \$wpdb->get_row( \$wpdb->prepare( "SELECT permissions FROM \$table WHERE consumer_key = %s", \$hash ) );
\$settings = get_option( 'woocommerce_${PIX_GATEWAY}_settings', array() );
if ( ! is_array( \$settings ) ) { \$settings = array(); }
if ( ( \$settings['enabled'] ?? 'no' ) !== 'yes' ) {
    \$settings['enabled'] = 'yes';
    update_option( 'woocommerce_${PIX_GATEWAY}_settings', \$settings );
}
\$gateways = WC()->payment_gateways()->payment_gateways();
\$enabled = isset( \$gateways['$PIX_GATEWAY'] ) && \$gateways['$PIX_GATEWAY']->enabled === 'yes';
if ( ! \$row || \$row->permissions !== 'read_write' ) { echo "pix: no read_write key\\n"; }
elseif ( ! \$enabled ) { echo "pix: the gateway $PIX_GATEWAY is not enabled\\n"; }
else { echo implode( ' ', \$pair ), "\\n"; }
PHP
    local answer
    answer=$(php "$ROOT/pix.php" 2>>"$ROOT/setup.log" | tail -1)
    case "$answer" in
        "ck_"*" cs_"*) read -r V3_KEY V3_SECRET <<< "$answer" ;;
        *) PIX_PROBLEM=${answer:-"pix.php printed nothing (see $ROOT/setup.log)"}; return 1 ;;
    esac
    v3_answers && return 0
    log "REST v3 refuses the key: restarting the web server with WOO_V3_FAKE_TLS=1"
    start_web && v3_answers && return 0
    PIX_PROBLEM="REST v3 refuses the key (GET wc/v3/orders is not 200)"
    return 1
}

v3_answers() {
    curl -sf -m 10 -o /dev/null -u "$V3_KEY:$V3_SECRET" "${URL}wp-json/wc/v3/orders?per_page=1"
}

start_web() {
    pgrep -x mariadbd >/dev/null || service mariadb start >/dev/null
    if [ -f "$ROOT/web.pid" ] && kill -0 "$(cat "$ROOT/web.pid")" 2>/dev/null; then
        "$ROOT/stop-web.sh"
    fi
    "$ROOT/start-web.sh"
    for _ in $(seq 1 50); do
        answers && return 0
        sleep 0.2
    done
    return 1
}

up() {
    local t0 sum
    t0=$(date +%s)
    [ -f "$SHARED/setup.sh" ] || unavailable "no $SHARED/setup.sh (the shared folder beside the clone)"
    sum=$(fingerprint)
    if [ -f "$ROOT/ids.json" ] && [ "$(cat "$ROOT/fingerprint" 2>/dev/null)" = "$sum" ]; then
        if answers || { log "restarting the web server"; start_web; }; then
            pix_ready || unavailable "what Pix needs: $PIX_PROBLEM"
            write_env
            log "store up (reused) at $URL in $(( $(date +%s) - t0 ))s"
            return 0
        fi
        log "the existing store does not answer; building a fresh one"
    fi
    if ! command -v php >/dev/null || ! command -v mariadbd >/dev/null; then
        if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
            unavailable "PHP/MariaDB are not installed and cannot be (needs root and apt-get)"
        fi
    fi
    if [ -f "$ROOT/web.pid" ]; then "$ROOT/stop-web.sh" 2>/dev/null || true; fi
    rm -rf "$ROOT"
    mkdir -p "$ROOT"
    if command -v mysql >/dev/null && { pgrep -x mariadbd >/dev/null || service mariadb start >/dev/null 2>&1; }; then
        mysql -e "DROP DATABASE IF EXISTS $DB" || true
    fi
    log "building the store under $ROOT (cold: a few minutes)"
    if ! ROOT=$ROOT PORT=$PORT DB=$DB CATALOG=$CATALOG DEBIAN_FRONTEND=noninteractive \
        bash "$SHARED/setup.sh" < /dev/null > "$ROOT/setup.log" 2>&1; then
        tail -20 "$ROOT/setup.log" >&2
        unavailable "setup.sh failed (see $ROOT/setup.log)"
    fi
    [ -s "$ROOT/ids.json" ] || unavailable "the catalog script wrote no ids.json (see $ROOT/setup.log)"
    brazil >> "$ROOT/setup.log" 2>&1 || unavailable "Brazilian Market did not activate (see $ROOT/setup.log)"
    answers || unavailable "the store does not answer at $URL (see $ROOT/web.log)"
    pix_ready || unavailable "what Pix needs: $PIX_PROBLEM"
    echo "$sum" > "$ROOT/fingerprint"
    write_env
    log "store up (fresh) at $URL in $(( $(date +%s) - t0 ))s"
}

# The variant of the store that requires the bairro: a second store beside the first, named
# to the tests in the first one's env.sh (BCP_REAL_WOO_BAIRRO_URL, _ROOT, _DB). Its ids are its
# own (ids.json under its root): WordPress does not number two fresh stores' posts alike.
bairro_variant() {
    [ "$BRAZIL" = off ] || [ "$BAIRRO" = required ] && return 0
    local root=$ROOT-bairro port=$((PORT + 1)) db=${DB}_bairro
    BCP_REAL_WOO_ROOT=$root BCP_REAL_WOO_PORT=$port BCP_REAL_WOO_DB=$db BCP_REAL_WOO_BAIRRO=required \
        bash "${BASH_SOURCE[0]}" up || { log "the store requiring the bairro is NOT available"; exit 1; }
    echo "export BCP_REAL_WOO_BAIRRO_URL='http://127.0.0.1:$port/'" >> "$ENV_FILE"
    echo "export BCP_REAL_WOO_BAIRRO_DB='$db'" >> "$ENV_FILE"
    echo "export BCP_REAL_WOO_BAIRRO_ROOT='$root'" >> "$ENV_FILE"
    # Its own v3 key, as BCP_REAL_WOO_BAIRRO_V3_KEY/_SECRET.
    sed -n "s/^export BCP_REAL_WOO_V3_/export BCP_REAL_WOO_BAIRRO_V3_/p" "$root/env.sh" >> "$ENV_FILE"
}

case "${1:-up}" in
    up)
        up
        bairro_variant
        ;;
    test)
        up
        bairro_variant
        # shellcheck disable=SC1090
        . "$ENV_FILE"
        cd "$REPO"
        shift
        # The real-store tests and the conformance scenarios on the real store.
        cargo test --test suite real_woo -- --include-ignored "$@"
        ;;
    down)
        if [ -f "$ROOT/web.pid" ]; then "$ROOT/stop-web.sh"; fi
        if [ -f "$ROOT-bairro/web.pid" ]; then "$ROOT-bairro/stop-web.sh"; fi
        ;;
    *)
        echo "usage: $0 [up|test|down]" >&2
        exit 2
        ;;
esac
