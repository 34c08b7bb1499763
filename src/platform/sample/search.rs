//! Free-text matching for the in-process store: every query word must occur (as a word
//! prefix, accent- and case-insensitive, plurals folded) somewhere in the product; products
//! matching in the title rank first.

use crate::model::Product;

fn fold(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            other => other,
        })
        .collect()
}

fn words(text: &str) -> Vec<String> {
    fold(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

fn stem(word: &str) -> &str {
    if word.len() <= 3 {
        return word;
    }
    if ["ches", "shes", "xes"]
        .iter()
        .any(|tail| word.ends_with(tail))
    {
        return &word[..word.len() - 2];
    }
    word.strip_suffix('s').unwrap_or(word)
}

/// Pre-folded searchable text of one product.
pub struct Index {
    title: Vec<String>,
    rest: Vec<String>,
}

impl Index {
    pub fn new(product: &Product) -> Self {
        let mut rest = String::new();
        let mut push = |text: &str| {
            rest.push(' ');
            rest.push_str(text);
        };
        product.description.plain.as_deref().map(&mut push);
        product.tags.iter().for_each(|tag| push(tag));
        product
            .categories
            .iter()
            .for_each(|category| push(&category.value));
        product
            .options
            .iter()
            .flat_map(|option| &option.values)
            .for_each(|value| push(value));
        product
            .variants
            .iter()
            .filter_map(|variant| variant.sku.as_deref())
            .for_each(&mut push);
        if let Some(handle) = &product.handle {
            push(handle);
        }
        Self {
            title: words(&product.title),
            rest: words(&rest),
        }
    }

    /// `None` when a query word is missing; otherwise a relevance score.
    pub fn score(&self, query_words: &[String]) -> Option<u32> {
        let mut score = 0;
        for word in query_words {
            let wanted = stem(word);
            let hit = |candidate: &String| candidate.starts_with(wanted);
            if self.title.iter().any(hit) {
                score += 3;
            } else if self.rest.iter().any(hit) {
                score += 1;
            } else {
                return None;
            }
        }
        Some(score)
    }
}

pub fn query_words(query: &str) -> Vec<String> {
    words(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_accents_case_and_plurals() {
        assert_eq!(
            words("Camiseta Básica ALGODÃO"),
            ["camiseta", "basica", "algodao"]
        );
        assert_eq!(stem("shoes"), "shoe");
        assert_eq!(stem("watches"), "watch");
        assert_eq!(stem("camisetas"), "camiseta");
        assert_eq!(stem("tee"), "tee");
    }
}
