<?php
// The real-store conformance catalog, loaded by .ci/real-woo.sh through the shared setup.sh
// (which fills @ROOT@/@PORT@). Run once on a fresh database; ids are then deterministic and
// written to @ROOT@/ids.json for the tests.
$_SERVER['HTTP_HOST'] = '127.0.0.1:@PORT@'; $_SERVER['REQUEST_URI'] = '/';
require '@ROOT@/site/wp-load.php';
function cat( $name, $slug, $parent = 0 ) {
    $t = term_exists( $slug, 'product_cat' );
    if ( ! $t ) { $t = wp_insert_term( $name, 'product_cat', array( 'slug' => $slug, 'parent' => $parent ) ); }
    return (int) $t['term_id'];
}
$clothing = cat( 'Clothing', 'clothing' );
$shorts   = cat( 'Shorts', 'shorts', $clothing );
$shoes    = cat( 'Shoes', 'shoes' );
$acc      = cat( 'Accessories', 'accessories' );
$out = array( 'cat_clothing' => $clothing, 'cat_shorts' => $shorts, 'cat_shoes' => $shoes, 'cat_accessories' => $acc );
function simple( $name, $slug, $sku, $price, $cats, $extra = array() ) {
    $p = new WC_Product_Simple();
    $p->set_name( $name ); $p->set_slug( $slug ); $p->set_sku( $sku ); $p->set_regular_price( $price );
    $p->set_category_ids( $cats ); $p->set_status( 'publish' ); $p->set_description( "Descrição de $name" );
    foreach ( $extra as $k => $v ) { $p->{"set_$k"}( $v ); }
    return $p->save();
}
// Simple products: plain, sold out, low stock, and SKUs with a space and non-ASCII letters.
$out['garrafa'] = simple( 'Garrafa Térmica', 'garrafa-termica', 'GARRAFA-1', '79.90', array( $acc ) );
$out['bolsa']   = simple( 'Bolsa de Lona', 'bolsa-de-lona', 'BOLSA LONA', '45.35', array( $acc ) );
$out['oculos']  = simple( 'Óculos de Sol', 'oculos-de-sol', 'OCULOS-OOS', '120.00', array( $acc ), array( 'stock_status' => 'outofstock' ) );
$out['cinto']   = simple( 'Cinto de Couro', 'cinto-de-couro', 'CINTO-3', '59.99', array( $clothing ), array( 'manage_stock' => true, 'stock_quantity' => 3 ) );
$out['caneca']  = simple( 'Caneca Café', 'caneca-cafe', 'CANECA-CAFÉ', '32.50', array( $acc ) );
// Enough look-alikes for a pagination walk (search "bermuda": 12 hits).
for ( $i = 1; $i <= 12; $i++ ) {
    $out["bermuda$i"] = simple( "Bermuda $i", "bermuda-$i", "BERMUDA-$i", sprintf( '%d.%02d', 30 + $i, $i * 7 ), array( $shorts ) );
}
// Global attributes Color and Size: two option axes.
foreach ( array( 'color' => 'Color', 'size' => 'Size' ) as $slug => $label ) {
    if ( ! wc_attribute_taxonomy_id_by_name( $slug ) ) {
        wc_create_attribute( array( 'name' => $label, 'slug' => $slug, 'type' => 'select', 'order_by' => 'menu_order' ) );
    }
    register_taxonomy( "pa_$slug", array( 'product' ), array( 'hierarchical' => false ) );
}
$terms = array( 'pa_color' => array( 'Preto' => 'preto', 'Branco' => 'branco', 'Azul' => 'azul' ), 'pa_size' => array( '38' => '38', '40' => '40', '42' => '42' ) );
$term_ids = array();
foreach ( $terms as $tax => $list ) {
    foreach ( $list as $n => $s ) {
        $t = term_exists( $s, $tax ); if ( ! $t ) { $t = wp_insert_term( $n, $tax, array( 'slug' => $s ) ); }
        $term_ids[ $tax ][] = (int) $t['term_id'];
    }
}
$v = new WC_Product_Variable();
$v->set_name( 'Tênis de Corrida' ); $v->set_slug( 'tenis-de-corrida' ); $v->set_sku( 'TENIS' ); $v->set_status( 'publish' );
$v->set_category_ids( array( $shoes ) ); $v->set_description( 'Tênis leve para corrida' );
$attrs = array();
foreach ( array( 'pa_color', 'pa_size' ) as $pos => $tax ) {
    $a = new WC_Product_Attribute();
    $a->set_id( wc_attribute_taxonomy_id_by_name( $tax ) ); $a->set_name( $tax ); $a->set_options( $term_ids[ $tax ] );
    $a->set_position( $pos ); $a->set_visible( true ); $a->set_variation( true );
    $attrs[] = $a;
}
$v->set_attributes( $attrs );
$vid = $v->save(); $out['tenis'] = $vid;
// Eight variations (azul/42 does not exist); branco/40 is sold out, azul/38 has 2 units.
foreach ( array( 'preto', 'branco', 'azul' ) as $c ) {
    foreach ( array( '38', '40', '42' ) as $s ) {
        if ( $c === 'azul' && $s === '42' ) { continue; }
        $var = new WC_Product_Variation();
        $var->set_parent_id( $vid ); $var->set_attributes( array( 'pa_color' => $c, 'pa_size' => $s ) );
        $var->set_sku( strtoupper( "TENIS-$c-$s" ) ); $var->set_regular_price( $s === '42' ? '349.90' : '299.90' );
        $var->set_status( 'publish' );
        if ( $c === 'branco' && $s === '40' ) { $var->set_stock_status( 'outofstock' ); }
        if ( $c === 'azul' && $s === '38' ) { $var->set_manage_stock( true ); $var->set_stock_quantity( 2 ); }
        $out[ "var_{$c}_{$s}" ] = $var->save();
    }
}
WC_Product_Variable::sync( $vid );
wc_delete_product_transients( $vid );
// Checkout: what CHECKOUT-FACTS.md observed on a real store. A zone for Brazil with two flat rates,
// free shipping above R$ 300 and local pickup; the offline gateways bacs (on-hold) and cod
// (processing); a percentage coupon and an expired one; taxes off, guest checkout on.
$zone = new WC_Shipping_Zone();
$zone->set_zone_name( 'Brasil' ); $zone->add_location( 'BR', 'country' ); $zone->save();
function method( $zone, $type, $settings ) {
    $instance = $zone->add_shipping_method( $type );
    update_option( "woocommerce_{$type}_{$instance}_settings", array_merge( array( 'enabled' => 'yes' ), $settings ) );
    return $instance;
}
$out['rate_pac']    = 'flat_rate:' . method( $zone, 'flat_rate', array( 'title' => 'PAC', 'tax_status' => 'none', 'cost' => '15.00' ) );
$out['rate_sedex']  = 'flat_rate:' . method( $zone, 'flat_rate', array( 'title' => 'SEDEX', 'tax_status' => 'none', 'cost' => '29.90' ) );
$out['rate_free']   = 'free_shipping:' . method( $zone, 'free_shipping', array( 'title' => 'Frete grátis', 'requires' => 'min_amount', 'min_amount' => '300.00', 'ignore_discounts' => 'no' ) );
$out['rate_pickup'] = 'local_pickup:' . method( $zone, 'local_pickup', array( 'title' => 'Retirar na loja', 'tax_status' => 'none', 'cost' => '' ) );
WC_Cache_Helper::get_transient_version( 'shipping', true );
update_option( 'woocommerce_bacs_settings', array( 'enabled' => 'yes', 'title' => 'Transferência bancária' ) );
update_option( 'woocommerce_enable_guest_checkout', 'yes' );
update_option( 'woocommerce_calc_taxes', 'no' );
$coupon = new WC_Coupon(); $coupon->set_code( 'bcp10' ); $coupon->set_discount_type( 'percent' ); $coupon->set_amount( 10 ); $coupon->save();
$expired = new WC_Coupon(); $expired->set_code( 'vencido' ); $expired->set_discount_type( 'fixed_cart' ); $expired->set_amount( 5 );
$expired->set_date_expires( time() - 3 * DAY_IN_SECONDS ); $expired->save();
// An online gateway as a Pix plugin is one: it leaves the order pending and sends the buyer to the
// store's order-pay page. Core has no such gateway, so the test store gets this stand-in.
@mkdir( '@ROOT@/site/wp-content/mu-plugins', 0755, true );
file_put_contents( '@ROOT@/site/wp-content/mu-plugins/pix-test-gateway.php', <<<'PHP'
<?php
add_action( 'plugins_loaded', function () {
    if ( ! class_exists( 'WC_Payment_Gateway' ) ) { return; }
    class BCP_Pix_Test_Gateway extends WC_Payment_Gateway {
        public function __construct() {
            $this->id = 'pix_test'; $this->method_title = 'Pix (test)'; $this->title = 'Pix';
            $this->has_fields = false; $this->enabled = 'yes'; $this->supports = array( 'products' );
        }
        public function process_payment( $order_id ) {
            $order = wc_get_order( $order_id );
            $order->update_status( 'pending' );
            return array( 'result' => 'success', 'redirect' => $order->get_checkout_payment_url() );
        }
    }
    add_filter( 'woocommerce_payment_gateways', function ( $gateways ) { $gateways[] = 'BCP_Pix_Test_Gateway'; return $gateways; } );
}, 11 );
PHP
);
// Pix (issue 38): a product whose stock only the Pix expiry test moves, so it can read the
// stock back after the order is cancelled while other tests place orders beside it.
$out['coador'] = simple( 'Coador de Café', 'coador-de-cafe', 'COADOR-PIX', '24.90', array( $acc ), array( 'manage_stock' => true, 'stock_quantity' => 500 ) );
echo json_encode( $out ), "\n";
file_put_contents( '@ROOT@/ids.json', json_encode( $out, JSON_PRETTY_PRINT ) );
