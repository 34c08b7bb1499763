<?php
// The store side of bench/store_load.sh, run with the store's own PHP CLI (not its web workers,
// so neither mode counts in the store's access log or its workers' CPU):
//   php store_load.php ROOT HOSTPORT catalog   adds the bench's long tail (120 simple products whose
//                                              names cross 10 nouns with 12 adjectives) once, and
//                                              prints every simple product's id and price as JSON
//   php store_load.php ROOT HOSTPORT update    reads "ID PRICE" lines on stdin, saves each price as
//                                              the merchant's admin would, and answers
//                                              "ID PRICE" with the price read back from the database
[ , $root, $hostport, $mode ] = $argv;
$_SERVER['HTTP_HOST'] = $hostport;
$_SERVER['REQUEST_URI'] = '/';
require "$root/site/wp-load.php";

const NOUNS = array( 'Camisa', 'Calça', 'Meia', 'Boné', 'Jaqueta', 'Vestido', 'Saia', 'Mochila', 'Relógio', 'Sandália' );
const ADJECTIVES = array( 'Azul', 'Preta', 'Branca', 'Listrada', 'Slim', 'Básica', 'Esportiva', 'Linho', 'Algodão', 'Couro', 'Jeans', 'Estampada' );

function price_of( $id ) {
    wp_cache_flush();
    return wc_get_product( $id )->get_regular_price();
}

if ( $mode === 'catalog' ) {
    $cat = term_exists( 'bench', 'product_cat' );
    if ( ! $cat ) { $cat = wp_insert_term( 'Bench', 'product_cat', array( 'slug' => 'bench' ) ); }
    foreach ( NOUNS as $n => $noun ) {
        foreach ( ADJECTIVES as $a => $adjective ) {
            $sku = sprintf( 'BENCH-%02d-%02d', $n, $a );
            if ( wc_get_product_id_by_sku( $sku ) ) { continue; }
            $p = new WC_Product_Simple();
            $p->set_name( "$noun $adjective" );
            $p->set_sku( $sku );
            $p->set_regular_price( sprintf( '%d.90', 20 + 7 * $n + $a ) );
            $p->set_category_ids( array( (int) $cat['term_id'] ) );
            $p->set_description( "$noun $adjective da loja, para o benchmark de carga." );
            $p->set_status( 'publish' );
            $p->save();
        }
    }
    $out = array();
    foreach ( wc_get_products( array( 'type' => 'simple', 'status' => 'publish', 'limit' => -1, 'stock_status' => 'instock' ) ) as $p ) {
        $out[] = array( 'id' => $p->get_id(), 'name' => $p->get_name(), 'price' => $p->get_regular_price() );
    }
    echo json_encode( $out ), "\n";
    exit;
}

if ( $mode === 'update' ) {
    while ( ( $line = fgets( STDIN ) ) !== false ) {
        [ $id, $price ] = explode( ' ', trim( $line ) );
        // This process lives for the whole run: drop what it remembers of earlier reads, so a
        // save changes only the price and never writes back stock a checkout has moved since.
        wp_cache_flush();
        $p = wc_get_product( (int) $id );
        $p->set_regular_price( $price );
        $p->save();
        echo $id, ' ', price_of( (int) $id ), "\n";
    }
    exit;
}
fwrite( STDERR, "unknown mode $mode\n" );
exit( 2 );
